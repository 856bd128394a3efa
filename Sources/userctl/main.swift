print("userctl: not yet")
