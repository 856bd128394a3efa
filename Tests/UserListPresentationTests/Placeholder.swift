// UserListPresentationTests: filled by its issue.
