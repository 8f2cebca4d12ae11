//! A conformance function built with AWS's Rust runtime client (`lambda_runtime`), nothing of
//! faascope's in it. The payload's "op" picks what it does (see tests/conformance/README.md).
use lambda_runtime::{service_fn, Diagnostic, Error, LambdaEvent};
use serde_json::{json, Map, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

async fn handler(event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let (payload, ctx) = event.into_parts();
    match payload.get("op").and_then(Value::as_str).unwrap_or("echo") {
        "error" => Err(Diagnostic {
            error_type: "HandledError".into(),
            error_message: payload.get("message").and_then(Value::as_str).unwrap_or("handled").into(),
        }),
        "panic" => panic!("{}", payload.get("message").and_then(Value::as_str).unwrap_or("unhandled")),
        "exit" => std::process::exit(3),
        "sleep" => {
            let s = payload.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
            tokio::time::sleep(Duration::from_secs_f64(s)).await;
            Ok(json!({"slept": s}))
        }
        "print" => {
            println!("{}", payload.get("line").and_then(Value::as_str).unwrap_or(""));
            Ok(json!({"printed": true}))
        }
        _ => {
            let mut env = Map::new();
            if let Some(names) = payload.get("env").and_then(Value::as_array) {
                for n in names.iter().filter_map(Value::as_str) {
                    env.insert(n.into(), std::env::var(n).map(Value::String).unwrap_or(Value::Null));
                }
            }
            let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
            Ok(json!({
                "payload": payload,
                "context": {
                    "request_id": ctx.request_id,
                    "invoked_function_arn": ctx.invoked_function_arn,
                    "remaining_ms": ctx.deadline as i64 - now_ms,
                    "client_context": ctx.client_context.map(|c| json!({"custom": c.custom, "env": c.environment, "client": {"installation_id": c.client.installation_id, "app_title": c.client.app_title}})),
                    "identity": ctx.identity.map(|i| json!({"identity_id": i.identity_id, "identity_pool_id": i.identity_pool_id})),
                    "trace_id": ctx.xray_trace_id,
                },
                "env": env,
                "rss_kb": rss_kb(),
            }))
        }
    }
}

/// The process's resident set (VmRSS of /proc/self/status) in KiB.
fn rss_kb() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(-1)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    if std::env::var_os("FAIL_INIT").is_some() {
        return Err("init failed on purpose (FAIL_INIT)".into());
    }
    lambda_runtime::run(service_fn(handler)).await
}
