"""A user's own function (``function.code`` with ``workload: {kind: invoke}``): the two go
together, the package exists (its path made absolute, relative to the spec file), and it runs
where faascope can deploy a package: the Lambda API (the local platform, AWS)."""
from __future__ import annotations

import zipfile
from pathlib import Path

from faascope.provider_kinds import LAMBDA_API_KINDS
from faascope.specs.fields import resolve_name
from faascope.specs.model import INVOKE_KIND, Spec


def check_code(spec: Spec, source: str, problems: list[tuple[str, str]]) -> None:
    code = spec.function.code
    kind = spec.workload.get("kind")
    if code is None:
        if kind == INVOKE_KIND:
            problems.append(("workload.kind", "invoke sends an event to a user's own function: "
                             "name it in function.code (path, runtime, handler)"))
        return
    if kind != INVOKE_KIND:
        problems.append(("workload.kind", f"with function.code the workload is the event sent "
                         f"to that function: write kind: {INVOKE_KIND} and its payload "
                         f"(got {kind!r})"))
    for name in spec.factors:
        try:
            section, fname = resolve_name(name)
        except ValueError:
            continue  # the factors' check says why
        if (section, fname) == ("workload", "kind"):
            problems.append((f"factors.{name}", "a user's function takes one kind of workload "
                             f"({INVOKE_KIND}); vary its payload instead"))
        if section == "function" and fname in ("code", "image_size"):
            problems.append((f"factors.{name}", f"function.{fname} cannot vary with "
                             "function.code (one package a campaign)"))
    if spec.function.image_size is not None:
        problems.append(("function.image_size", "pads faascope's agent package; a user's "
                         "function is deployed as its package is"))
    if spec.load is not None and spec.load.member_index is not None:
        problems.append(("load.member_index", "sets a field of the agent's request; a user's "
                         "event is sent as it is: write {index} in a string of the payload, "
                         "which each member gets replaced by its index"))
    kinds = {spec.provider.kind} | {d.kind or spec.provider.kind for d in spec.deployments.values()}
    for k in sorted(kinds - set(LAMBDA_API_KINDS)):
        problems.append(("provider.kind", f"a user's function is deployed through the Lambda "
                         f"API ({', '.join(LAMBDA_API_KINDS)}); {k!r} cannot deploy it"))
    base = Path(source).resolve().parent if source else Path.cwd()
    path = (base / code.path).resolve()
    if path.is_dir():
        if not any(p.is_file() for p in path.rglob("*")):
            problems.append(("function.code.path", f"{path} holds no files"))
    elif path.is_file():
        if not zipfile.is_zipfile(path):
            problems.append(("function.code.path", f"{path} is not a zip file; give a "
                             "directory or a .zip"))
    else:
        problems.append(("function.code.path", f"{code.path}: no such directory or zip "
                         f"(relative to the spec, {base})"))
    code.path = str(path)  # absolute: a cell's configuration names the package wherever it runs
