//! The RPC benchmark's OpenKeel side (`bench/rpc.sh` runs it against the Python pair):
//!
//! ```text
//! rpc_bench server <transport_url> <topic>            # serve echo / tick / count until killed
//! rpc_bench client <transport_url> <topic> <calls> <casts>
//! ```
//!
//! The client makes `<calls>` sequential `echo` calls (round-trip latency), then publishes
//! `<casts>` `tick` casts as fast as the broker confirms them and polls `count` until the
//! server has seen them all (cast throughput end to end). It prints one JSON line.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::server::RpcServer;
use openkeel_rpc::oslo::RabbitSettings;
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Bench {
    ticks: AtomicU64,
}

#[async_trait]
impl Dispatcher for Bench {
    async fn dispatch(
        &self,
        _ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        match method {
            "echo" => Ok(Value::Object(args)),
            "tick" => {
                self.ticks.fetch_add(1, Ordering::Relaxed);
                Ok(Value::Null)
            }
            "count" => Ok(json!(self.ticks.load(Ordering::Relaxed))),
            other => Err(openkeel_rpc::remote::no_such_method(other)),
        }
    }
}

fn ctx() -> RequestContext {
    RequestContext {
        user_id: Some("bench".into()),
        project_id: Some("bench".into()),
        roles: vec!["admin".into()],
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    }
}

fn usage() -> ! {
    eprintln!("usage: rpc_bench server <url> <topic> | client <url> <topic> <calls> <casts>");
    std::process::exit(2)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        usage()
    }
    let settings = Arc::new(RabbitSettings::for_url(&a[2], "rpc_bench")?);
    let topic = a[3].clone();
    match a[1].as_str() {
        "server" => {
            let server = RpcServer::start(
                settings,
                topic,
                "bench",
                Arc::new(Bench {
                    ticks: AtomicU64::new(0),
                }),
            );
            tokio::signal::ctrl_c().await?;
            server.stop().await;
        }
        "client" => {
            let (Some(calls), Some(casts)) = (
                a.get(4).and_then(|s| s.parse::<usize>().ok()),
                a.get(5).and_then(|s| s.parse::<u64>().ok()),
            ) else {
                usage()
            };
            let caller = AmqpCaller::new(settings, topic);
            // Warm up: the connection, the reply queue, the server.
            for _ in 0..20 {
                caller.call(&ctx(), "echo", Args::new()).await?;
            }
            let base = caller
                .call(&ctx(), "count", Args::new())
                .await?
                .as_u64()
                .unwrap_or(0);
            let mut lat = Vec::with_capacity(calls);
            let t0 = Instant::now();
            for i in 0..calls {
                let mut args = Args::new();
                args.insert("i".into(), json!(i));
                let t = Instant::now();
                caller.call(&ctx(), "echo", args).await?;
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            let calls_elapsed = t0.elapsed().as_secs_f64();
            lat.sort_by(|x, y| x.total_cmp(y));
            let t1 = Instant::now();
            for _ in 0..casts {
                caller.cast(&ctx(), "tick", Args::new()).await?;
            }
            let published = t1.elapsed().as_secs_f64();
            loop {
                let n = caller
                    .call(&ctx(), "count", Args::new())
                    .await?
                    .as_u64()
                    .unwrap_or(0);
                if n >= base + casts {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let consumed = t1.elapsed().as_secs_f64();
            println!(
                "{}",
                json!({
                    "client": "openkeel",
                    "calls": calls,
                    "call_p50_ms": percentile(&lat, 0.50),
                    "call_p99_ms": percentile(&lat, 0.99),
                    "calls_per_s": calls as f64 / calls_elapsed,
                    "casts": casts,
                    "casts_published_per_s": casts as f64 / published,
                    "casts_consumed_per_s": casts as f64 / consumed,
                })
            );
        }
        _ => usage(),
    }
    Ok(())
}
