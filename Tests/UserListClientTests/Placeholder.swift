// UserListClientTests: filled by its issue.
