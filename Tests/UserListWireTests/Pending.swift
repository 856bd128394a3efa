// removed when the wire tests land
