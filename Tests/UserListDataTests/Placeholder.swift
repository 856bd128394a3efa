// UserListDataTests: filled by its issue.
