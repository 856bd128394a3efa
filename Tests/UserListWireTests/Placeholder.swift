// UserListWireTests: filled by its issue.
