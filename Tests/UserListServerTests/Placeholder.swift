// UserListServerTests: filled by its issue.
