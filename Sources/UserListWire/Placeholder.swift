// UserListWire: filled by its issue.
