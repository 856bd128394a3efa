// UserListData: filled by its issue.
