//! The limit for the RPC benchmark (`bench/rpc.sh`): a raw AMQP ping-pong through the same
//! broker with the same AMQP library (lapin), nothing of oslo.messaging around it: no
//! envelope to encode or decode, no publisher confirms, no acks (`no_ack` consumers), no
//! dispatch.
//!
//! ```text
//! amqp_pingpong server <amqp_url> <queue> [protocol]          # answer until killed
//! amqp_pingpong client <amqp_url> <queue> <pings> [protocol]  # round trips, one JSON line
//! ```
//!
//! With `protocol` (both sides), the AMQP of an oslo.messaging call as OpenKeel speaks it,
//! still without any envelope or dispatch: requests published `mandatory` to a topic
//! exchange, replies `mandatory` to the default exchange, both sides' channels in confirm
//! mode with each confirm awaited, persistent delivery mode, the server's consumer acking
//! each request before it answers, the client's reply consumer `no_ack`.
//!
//! The messages carry the bytes of an oslo `echo` call as OpenKeel's caller sends it, so
//! the broker moves as much as in the RPC rows.

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, ConfirmSelectOptions,
    ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
};
use lapin::types::{FieldTable, ShortString};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
};
use openkeel_core::context::RequestContext;
use openkeel_rpc::oslo::message;
use openkeel_rpc::transport::Args;
use serde_json::json;
use std::time::Instant;

fn usage() -> ! {
    eprintln!("usage: amqp_pingpong server <url> <queue> | client <url> <queue> <pings>");
    std::process::exit(2)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The bytes of an oslo call of `echo` with one argument, as OpenKeel's caller publishes it.
fn oslo_sized_body() -> Vec<u8> {
    let ctx = RequestContext {
        user_id: Some("bench".into()),
        project_id: Some("bench".into()),
        roles: vec!["admin".into()],
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    };
    let mut args = Args::new();
    args.insert("i".into(), json!(1000));
    let call = message::CallInfo {
        msg_id: message::new_id(),
        reply_q: format!("reply_{}", message::new_id()),
    };
    message::serialize_envelope(&message::request(&ctx, "echo", args, Some(&call)))
}

/// The topic exchange requests go through in `protocol` mode.
const EXCHANGE: &str = "amqp-pingpong";

async fn channel(url: &str, protocol: bool) -> Result<(Connection, Channel), lapin::Error> {
    let conn = Connection::connect(url, ConnectionProperties::default()).await?;
    let ch = conn.create_channel().await?;
    if protocol {
        ch.confirm_select(ConfirmSelectOptions::default()).await?;
        ch.exchange_declare(
            EXCHANGE.into(),
            ExchangeKind::Topic,
            ExchangeDeclareOptions {
                auto_delete: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await?;
    }
    Ok((conn, ch))
}

/// Publish (in `protocol` mode `mandatory`, persistent, and wait for the broker's confirm).
async fn publish(
    ch: &Channel,
    exchange: &str,
    key: &str,
    body: &[u8],
    props: BasicProperties,
    protocol: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let props = if protocol {
        props.with_delivery_mode(2)
    } else {
        props
    };
    let confirm = ch
        .basic_publish(
            exchange.into(),
            key.into(),
            BasicPublishOptions {
                mandatory: protocol,
                ..Default::default()
            },
            body,
            props,
        )
        .await?;
    if protocol && !matches!(confirm.await?, Confirmation::Ack(None)) {
        return Err("not confirmed".into());
    }
    Ok(())
}

fn no_ack() -> BasicConsumeOptions {
    BasicConsumeOptions {
        no_ack: true,
        ..Default::default()
    }
}

/// One round trip: publish to the server's queue, wait for its answer.
async fn ping(
    ch: &Channel,
    queue: &str,
    body: &[u8],
    props: &BasicProperties,
    replies: &mut lapin::Consumer,
    protocol: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let exchange = if protocol { EXCHANGE } else { "" };
    publish(ch, exchange, queue, body, props.clone(), protocol).await?;
    match replies.next().await {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(e.into()),
        None => Err("the reply consumer ended".into()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        usage()
    }
    let (url, queue) = (a[2].replacen("rabbit://", "amqp://", 1), a[3].clone());
    let protocol = a.last().is_some_and(|x| x == "protocol");
    match a[1].as_str() {
        "server" => {
            let (_conn, ch) = channel(&url, protocol).await?;
            ch.queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions {
                    auto_delete: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await?;
            if protocol {
                ch.queue_bind(
                    queue.as_str().into(),
                    EXCHANGE.into(),
                    queue.as_str().into(),
                    QueueBindOptions::default(),
                    FieldTable::default(),
                )
                .await?;
            }
            let consume = if protocol {
                BasicConsumeOptions::default()
            } else {
                no_ack()
            };
            let mut pings = ch
                .basic_consume(
                    queue.as_str().into(),
                    "pingpong".into(),
                    consume,
                    FieldTable::default(),
                )
                .await?;
            let serve = async {
                while let Some(Ok(d)) = pings.next().await {
                    let Some(reply_to) = d.properties.reply_to().clone() else {
                        continue;
                    };
                    if protocol {
                        d.acker.ack(BasicAckOptions::default()).await?;
                    }
                    let props = BasicProperties::default();
                    publish(&ch, "", reply_to.as_str(), &d.data, props, protocol).await?;
                }
                Ok::<(), Box<dyn std::error::Error>>(())
            };
            tokio::select! {
                r = serve => r?,
                r = tokio::signal::ctrl_c() => r?,
            }
        }
        "client" => {
            let Some(pings) = a.get(4).and_then(|s| s.parse::<usize>().ok()) else {
                usage()
            };
            let (_conn, ch) = channel(&url, protocol).await?;
            let reply = ch
                .queue_declare(
                    "".into(),
                    QueueDeclareOptions {
                        exclusive: true,
                        auto_delete: true,
                        ..Default::default()
                    },
                    FieldTable::default(),
                )
                .await?;
            let reply_q = reply.name().to_string();
            let mut replies = ch
                .basic_consume(
                    reply_q.as_str().into(),
                    "replies".into(),
                    no_ack(),
                    FieldTable::default(),
                )
                .await?;
            let body = oslo_sized_body();
            let props = BasicProperties::default().with_reply_to(ShortString::from(reply_q));
            for _ in 0..50 {
                ping(&ch, &queue, &body, &props, &mut replies, protocol).await?;
            }
            let mut lat = Vec::with_capacity(pings);
            let t0 = Instant::now();
            for _ in 0..pings {
                let t = Instant::now();
                ping(&ch, &queue, &body, &props, &mut replies, protocol).await?;
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            let elapsed = t0.elapsed().as_secs_f64();
            lat.sort_by(|x, y| x.total_cmp(y));
            println!(
                "{}",
                json!({
                    "client": if protocol { "amqp-pingpong-protocol" } else { "amqp-pingpong" },
                    "calls": pings,
                    "body_bytes": body.len(),
                    "call_p50_ms": percentile(&lat, 0.50),
                    "call_p99_ms": percentile(&lat, 0.99),
                    "calls_per_s": pings as f64 / elapsed,
                })
            );
        }
        _ => usage(),
    }
    Ok(())
}
