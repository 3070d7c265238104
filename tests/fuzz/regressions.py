"""Cases the fuzzer failed on once, kept so that every run tries them again (test_fuzz.py).

Each names the seed of the run that found it and what it found.
"""

from __future__ import annotations

from tests.fuzz.corrupt import Corruption

CASES: list[Corruption] = [
    # seed 1: `!!timestamp` on a value that is no timestamp; PyYAML's constructor failed with
    # AttributeError (exit 3, "internal error"); now yaml-syntax at the line
    Corruption("clusters/gpu-prod/clusterqueues.yaml", "tag", 0, "!!timestamp"),
    # seed 1: the same inside Kueue's Configuration, the YAML a ConfigMap holds, which the
    # kueue-config check read with yaml.safe_load (exit 3); now read by pyyaml_reader.load_one
    Corruption("clusters/gpu-staging/kueue/manager-config.yaml", "tag", 55, "!!timestamp"),
    # seed 1: `!!set` on a scalar made an empty Python set, which no JSON holds; drift's
    # comparison failed on it (TypeError: unhashable type); now yaml-syntax at the line
    Corruption("tenants/team-a/gpu-staging/rbac.yaml", "tag", 6113, "!!set"),
    # seed 1: a NUL byte in a profile: exit 2 as it should, but the message ran over three
    # lines (PyYAML's reader error); now one line, at the line of the byte
    Corruption("clusters/gpu-staging/profile.yaml", "byte-flip", 0, [(0, 0)]),
    # seed 1: a file cut inside `annotations:` left them a string; drift's normalizer failed
    # on it (AttributeError); now drift-not-compared, with the schema's complaint, at the line
    Corruption("tenants/team-b/gpu-staging/namespace.yaml", "truncate", 576),
    # derandomized run: a file cut inside a namespaceSelector left `matchLabels` a string;
    # drift's metadata readers failed on it. Drift now compares only objects whose shape
    # their schema accepts, and says the others are not compared
    Corruption("clusters/gpu-prod/clusterqueues.yaml", "truncate", 381),
]
