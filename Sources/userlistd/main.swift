print("userlistd: not yet")
