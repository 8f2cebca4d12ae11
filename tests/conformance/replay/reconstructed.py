"""Recorded tests and cases no committed LocalStack test replays as recorded, reconstructed from
AWS's recorded answers (the calls copied from LocalStack are named, with their commit, in NOTICE).

LocalStack's snapshot file keeps answers AWS gave to test code that changed before it was
committed (extract.NEVER_COMMITTED and NEVER_COMMITTED_CASES). Where those answers pin the calls
down, the calls are rebuilt here; each case's PROVENANCE says what in the recording (or in the
committed sibling cases) fixes every argument, and what stays a guess. The replay runs them as it
runs ported.py's and counts a match as a pass, but results.json marks each with
``"reconstructed"`` (its provenance) and docs/platform.md's replay section lists them apart, so a
reader can tell AWS's answer to LocalStack's committed call from AWS's answer to a call rebuilt here.

One skip-marked test whose recording stops after its first answer (the rest of the test fails
on AWS today) is replayed up to that answer.

A recorded case with an empty recording (``{}``: the test skipped or stopped before its first
snapshot) is not reconstructed: there is no answer to rebuild a call from.
"""
from __future__ import annotations

import pytest

from . import ported
from .lsshim import TEST_LAMBDA_PYTHON_ECHO, Runtime, arns, short_uid

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


class TestLambdaPermissions:
    def test_lambda_permission_versioning(self, aws_client, create_lambda_function, snapshot):
        """PROVENANCE_PERMISSION_VERSIONING says where each call comes from."""
        lambda_client = aws_client.lambda_
        function_name = f"lambda_func-{short_uid()}"
        create_lambda_function(handler_file=TEST_LAMBDA_PYTHON_ECHO, func_name=function_name,
                               runtime=Runtime.python3_9)
        action, sid, principal = "lambda:InvokeFunction", "s3", "s3.amazonaws.com"
        resp = lambda_client.add_permission(FunctionName=function_name, Action=action, StatementId=sid,
                                            Principal=principal, SourceArn=arns.s3_bucket_arn("test-bucket"))
        snapshot.match("add_permission", resp)
        snapshot.match("get_policy", lambda_client.get_policy(FunctionName=function_name))
        fn_version = lambda_client.publish_version(FunctionName=function_name)["Version"]
        snapshot.match("get_policy_after_publishing_latest", lambda_client.get_policy(FunctionName=function_name))
        with pytest.raises(lambda_client.exceptions.ResourceNotFoundException) as e:
            lambda_client.get_policy(FunctionName=function_name, Qualifier=fn_version)
        snapshot.match("get_policy_after_publishing_new_version", e.value.response)
        lambda_client.add_permission(FunctionName=f"{function_name}:{fn_version}", Action=action, StatementId=sid,
                                     Principal=principal, SourceArn=arns.s3_bucket_arn("test-bucket"),
                                     Qualifier=fn_version)
        policy = lambda_client.get_policy(FunctionName=function_name)
        snapshot.match("get_policy_after_adding_to_new_version", policy)
        lambda_client.add_permission(FunctionName=function_name, Action=action, StatementId=f"{sid}_2",
                                     Principal=principal, SourceArn=arns.s3_bucket_arn("test-bucket"),
                                     RevisionId=policy["RevisionId"])
        snapshot.match("get_policy_after_adding_2", lambda_client.get_policy(FunctionName=function_name))


PROVENANCE_PERMISSION_VERSIONING = (
    "recorded 21-12-2022 in the PR committed a week later (fe9811f9d) as "
    "test_lambda_permission_fn_versioning, whose calls these are (tests/integration/awslambda/"
    "test_lambda_api.py L2358 of fe9811f9d), less the version's and alias's: the recording has six of "
    "the committed test's ten snapshots, and those six in the committed order with the committed "
    "keys (add_permission, get_policy, get_policy_after_publishing_latest, "
    "get_policy_after_publishing_new_version, get_policy_after_adding_to_new_version, "
    "get_policy_after_adding_2). The permission on the version (not snapshotted in either) is kept: "
    "the key get_policy_after_adding_to_new_version names it, and the unqualified policy it "
    "reads is the one recorded before it (one statement). A guess: whether the 2022 test created "
    "the alias (the recording has no alias answer; it is left out).")


class TestLambdaRevisions:
    def test_function_revisions_permissions(self, create_lambda_function, snapshot, aws_client):
        """The committed test's calls up to its first snapshot, the only one AWS's recording has
        (PROVENANCE_REVISIONS_PERMISSIONS); copied from LocalStack (L2765 of 8b9a79f05846; NOTICE)."""
        function_name = f"fn-{short_uid()}"
        create_lambda_function(func_name=function_name, handler_file=TEST_LAMBDA_PYTHON_ECHO,
                               runtime=Runtime.python3_12)
        aws_client.lambda_.get_function(FunctionName=function_name)
        sid = "s3"
        with pytest.raises(aws_client.lambda_.exceptions.PreconditionFailedException) as e:
            aws_client.lambda_.add_permission(FunctionName=function_name, StatementId=sid,
                                              Action="lambda:InvokeFunction", Principal="s3.amazonaws.com",
                                              RevisionId="wrong")
        snapshot.match("add_permission_revision_exception", e.value.response)


PROVENANCE_REVISIONS_PERMISSIONS = (
    "LocalStack's test is skip-marked ('The API on AWS has changed significantly and this test needs "
    "re-writing'); its recording of 25-11-2025 holds one answer, add_permission_revision_exception, "
    "after which the test stopped on AWS (its next call passes the function's RevisionId where AWS "
    "now wants the policy's). Replayed: the committed calls up to that snapshot, verbatim; the "
    "rest, whose answers AWS's recording lacks, is not.")


# {"Class::test[id]": skip_snapshot_verify paths} a reconstructed test adds, each with its reason
SKIP_PATHS = {
    # This recording alone keeps AWS's raw response metadata (its request id, the date, the
    # connection headers), which LocalStack's transformers strip from every other recording and
    # from the local answer alike; the error's code, message, Type and status stay compared.
    "TestLambdaRevisions::test_function_revisions_permissions": [
        "$..ResponseMetadata.HTTPHeaders", "$..ResponseMetadata.RequestId", "$..ResponseMetadata.RetryAttempts"],
}

# {"Class::test[id]": provenance} of every reconstructed case (what results.json records)
PROVENANCE = {
    **{f"TestLambdaFunction::test_function_name_and_qualifier_validation[{cid}-{fn}]": why
       for cid, _, why in _cases() for fn in CLIENTFNS if (cid, fn) not in EMPTY},
    "TestLambdaPermissions::test_lambda_permission_versioning": PROVENANCE_PERMISSION_VERSIONING,
    "TestLambdaRevisions::test_function_revisions_permissions": PROVENANCE_REVISIONS_PERMISSIONS,
}
