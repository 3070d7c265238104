"""The replay simulator of kueue-gitops, compiled: bin/<release>/kueuesim and manifest.json,
which kueue-gitops reads (auditor/sandbox/kueuesim.py). No Python API of its own."""
