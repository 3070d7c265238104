"""`plan`: what a change between two revisions does to each cluster, offline and live."""
