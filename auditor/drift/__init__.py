"""`drift`: read each live cluster, normalize both sides, compare, classify, attribute."""
