"""Speed, behind one seam: what makes validate and drift fast without changing what they find.

- `parallel`: pure-Python work shared among forked processes (the one "may I fork?" guard, the
  fallback to this process, how work reaches a child);
- `packs`: each cluster's pack in the user cache, opened one way for validate and drift (what a
  pack holds, and its store: auditor/repo/cache.py; the loader served from it:
  auditor/repo/cached.py; validate's verdicts and checks kept in it: auditor/validate/kept.py);
- the fast YAML reader lives under the loader it serves (auditor/repo/fast_reader.py).

tests/unit/speed/ holds each to what is plain: forked against in-process, cached against cold,
the fast reader against PyYAML. Nothing is imported here: drift forks its loader before it
imports anything heavy (auditor/drift/preload.py).
"""
