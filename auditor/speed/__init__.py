"""Speed, behind one seam: what makes validate and drift fast without changing what they find.
No module outside this package starts a process or a pool of threads for speed.

- `parallel`: pure-Python work shared among forked processes (the one "may I fork?" guard, the
  fallback to this process, how work reaches a child); `engine`: a batch of program runs
  (`programs`) on the local cores or on Ray (`ray`, which never imports `parallel`);
- `stream`: work fed as it arrives to a forked child (drift's comparisons, as the LISTs end);
- `threads`: I/O in a thread per item (drift's clusters);
- `collector`: the garbage collector's pace for runs of many long-lived objects;
- `packs`: each cluster's pack in the user cache, opened one way for validate and drift (what a
  pack holds, and its store: auditor/repo/cache.py; the loader served from it:
  auditor/repo/cached.py; validate's verdicts and checks kept in it: auditor/validate/kept.py);
- the fast YAML reader lives under the loader it serves (auditor/repo/fast_reader.py).

tests/unit/speed/ and each pipeline's equivalence tests (tests/unit/drift/test_equivalence.py)
hold each to what is plain: forked against in-process, cached against cold, the fast reader
against PyYAML. Nothing is imported here: drift forks its repository side before it imports
anything heavy (auditor/drift/comparer.py).
"""
