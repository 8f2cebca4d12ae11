// The nodejs*.x managed runtime: AWS's runtime interface client (aws-lambda-ric) on the handler
// in $_HANDLER ("index.handler": index.js, index.mjs or index.cjs in the package), as Lambda's
// /var/runtime/index.mjs starts it. Where the machine's Node.js is not the major version the
// function asked for ($AWS_EXECUTION_ENV), the first line of the function's log says so.
const want = (process.env.AWS_EXECUTION_ENV || "").replace(/^AWS_Lambda_nodejs/, "").replace(/\.x$/, "");
const have = process.versions.node.split(".")[0];
if (want && want !== have) {
  // The same sentence as the function's StateReason (agent/platform/runtimes.go: RuntimeNote).
  console.error(`The local platform runs nodejs${want}.x under Node.js ${have} (${process.execPath}), ` +
    `not Node.js ${want}: this machine has no other.`);
}
const { run } = await import("aws-lambda-ric");
await run(process.env.LAMBDA_TASK_ROOT || process.cwd(), process.env._HANDLER);
