"""JSON Schemas fetched from live clusters (`schemas fetch`) and read back offline."""
