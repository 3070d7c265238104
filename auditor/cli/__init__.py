"""The command line. Only this package imports click."""
