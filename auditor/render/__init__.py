"""Render a folder as Argo CD's repo-server does (kustomize, Helm, or a plain directory), and
give each object the place a person edits (auditor/render/locate.py).

A `Source` is one path an Application syncs, with the Argo CD source spec that says how
(`kustomize:`, `helm:`, `directory:`). The renderers are the real binaries at the releases the
pinned Argo CD runs (auditor/render/tools.py); a render reads only the files it can reach (a
kustomization's resources, components and patches; a chart and its value files), which are
copied out of the tree (the working tree or a git revision alike; never a file outside the
repository: auditor/render/run.py), and its output is kept in the user cache by the hash of
those files and the spec (auditor/render/cache.py), so a change outside them does not render
them again. What cannot be rendered is a finding at its file, never a silent skip.
"""
