// UserListServer: filled by its issue.
