"""The speed seam (auditor/speed/) held to what is plain: forked against in-process
(speed/parallel.py), the loader served from the cache against a cold load, validate's packs
read by drift (speed/packs.py, repo/cache.py, repo/cached.py), the fast YAML reader against
PyYAML (repo/fast_reader.py)."""
