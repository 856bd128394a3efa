// UserListClient: filled by its issue.
