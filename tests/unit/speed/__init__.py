"""The speed seam held to what is plain: forked against in-process (auditor/parallel.py), the
fast YAML reader against PyYAML (auditor/repo/fast_reader.py), cached against cold
(auditor/repo/cache.py)."""
