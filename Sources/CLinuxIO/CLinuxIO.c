// Intentionally empty: everything is inline in include/CLinuxIO.h.
