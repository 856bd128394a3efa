// UserListPresentation: filled by its issue.
