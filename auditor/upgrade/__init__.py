"""`upgrade-check`: may a cluster's Kueue be moved to a release? `readiness` answers it (now,
compatibility, running work); `bundle` reads the release's CRDs; `probes` tries them."""
