"""`kueue-gitops plan`: what a change does before it merges, one verb per question.

group.py wires the verbs; each verb is a module of its own with only its options (options.py
declares the shared ones); legacy.py reads the old one-command spellings for one more release.
"""
