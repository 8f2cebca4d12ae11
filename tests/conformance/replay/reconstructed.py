"""Recorded tests and cases whose code no LocalStack commit has, reconstructed from AWS's recorded
answers (not LocalStack's code: nothing here is copied but what ported.py already holds).

LocalStack's snapshot file keeps answers AWS gave to test code that changed before it was
committed (extract.NEVER_COMMITTED and NEVER_COMMITTED_CASES). Where those answers pin the calls
down, the calls are rebuilt here; each case's PROVENANCE says what in the recording (or in the
committed sibling cases) fixes every argument, and what stays a guess. The replay runs them as it
runs ported.py's and counts a match as a pass, but results.json marks each with
``"reconstructed"`` (its provenance) and docs/platform.md's replay section lists them apart, so a
reader can tell AWS's answer to LocalStack's committed call from AWS's answer to a call rebuilt here.

A recorded case with an empty recording (``{}``: the test skipped or stopped before its first
snapshot) is not reconstructed: there is no answer to rebuild a call from.
"""
from __future__ import annotations

import pytest

from . import ported

# The qualifier_too_long cases' common arguments. AWS's documented limits (Lambda API reference,
# GetFunction/Invoke/DeleteFunction "Qualifier": length 1-128; CreateFunction "FunctionName":
# length 1-140) are the ones the recorded messages state.
QUALIFIER_TOO_LONG = "a" * 129  # one over 128: the recorded '<a:len(129)>' (ported.py's regex transformer)
QUALIFIER_65 = "a" * 65  # the recorded '<a:len(65)>': exactly 65 a's (66 would record '<a:len(65)>a')

_SAME_AS_COMMITTED = (
    "the 22-08-2024 run had two cases both with pytest id qualifier_too_long, which pytest names "
    "qualifier_too_long0 and qualifier_too_long1. qualifier_too_long0 is the committed "
    "qualifier_too_long case (ff1c31bce): FunctionName 'my-function', Qualifier 'a' * 129; its "
    "four recorded answers are word for word those of the committed case recorded on 25-11-2025 "
    "(the qualifier's length error, 'my-function:<a:len(129)>' for CreateFunction).")
_QUALIFIER_65 = (
    "{case}: FunctionName 'my-function', Qualifier 'a' * 65. The recorded answers fix both: "
    "GetFunction and Invoke answer 'Function not found: ...:function:my-function:<a:len(65)>' (the "
    "name my-function and a qualifier the test's regex transformer turns into <a:len(65)>, i.e. "
    "exactly 65 a's), DeleteFunction 'Deletion of aliases is not currently supported.' (a "
    "non-numeric qualifier, taken as an alias). A guess: whether the qualifier was passed as "
    "Qualifier or appended to FunctionName ('my-function:' + 'a' * 65), which AWS answers alike "
    "for these three calls; the committed test's style (a Qualifier key) is used. Its "
    "CreateFunction case recorded nothing ({{}}), so it is not reconstructed.")


def _cases():
    """[(case id, test_case, provenance)] (the clientfn parameter is the committed test's)."""
    return [
        ("qualifier_too_long0", {"FunctionName": "my-function", "Qualifier": QUALIFIER_TOO_LONG},
         _SAME_AS_COMMITTED),
        ("qualifier_too_long1", {"FunctionName": "my-function", "Qualifier": QUALIFIER_65},
         _QUALIFIER_65.format(case="qualifier_too_long1")),
        ("function_name_and_qualifier_too_long", {"FunctionName": "my-function", "Qualifier": QUALIFIER_65},
         _QUALIFIER_65.format(case="function_name_and_qualifier_too_long (recorded 3 minutes after "
                              "qualifier_too_long1 with the same answers)")),
    ]


CLIENTFNS = ("get_function", "delete_function", "invoke", "create_function")
# Recorded cases with an empty recording: nothing to rebuild the call from
EMPTY = {("qualifier_too_long1", "create_function"), ("function_name_and_qualifier_too_long", "create_function")}


class TestLambdaFunction:
    @pytest.mark.parametrize(
        "clientfn,test_case",
        [pytest.param(fn, dict(tc), id=f"{cid}-{fn}") for cid, tc, _ in _cases() for fn in CLIENTFNS
         if (cid, fn) not in EMPTY],
    )
    def test_function_name_and_qualifier_validation(
        self, request, region_name, account_id, aws_client, clientfn, lambda_su_role, test_case, snapshot,
    ):
        # The calls, transformers and snapshot keys are the committed test's (ported.py, copied
        # from LocalStack); only the parameters above are reconstructed.
        return ported.TestLambdaFunction.test_function_name_and_qualifier_validation(
            self, request, region_name, account_id, aws_client, clientfn, lambda_su_role,
            test_case, snapshot)


# {"Class::test[id]": provenance} of every reconstructed case (what results.json records)
PROVENANCE = {
    f"TestLambdaFunction::test_function_name_and_qualifier_validation[{cid}-{fn}]": why
    for cid, _, why in _cases() for fn in CLIENTFNS if (cid, fn) not in EMPTY
}
