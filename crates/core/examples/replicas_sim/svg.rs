//! The timeline of `replicas_sim` as an SVG: per load profile, the pods
//! each rule ran against the load, and the p99 queue wait per 10 seconds.

use std::fmt::Write;

use crate::Params;

pub struct Series {
    pub scenario: usize,
    pub rule: &'static str,
    /// Pods (ready or not) at each second.
    pub replicas: Vec<u32>,
    /// p99 queue wait (ms) per 10-second window (0 when none started in it).
    pub p99: Vec<f64>,
}

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 190.0;
const PANEL: f64 = 150.0;

fn color(rule: &str) -> &'static str {
    match rule {
        "queue-age+busy" => "#1f63c6",
        "queue-age" => "#2aa39a",
        _ => "#e07b00",
    }
}

fn polyline(out: &mut String, points: impl Iterator<Item = (f64, f64)>, stroke: &str, dash: &str) {
    let pts: Vec<String> = points.map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        out,
        r#"<polyline fill="none" stroke="{stroke}" stroke-width="1.6" {dash} points="{}"/>"#,
        pts.join(" ")
    );
}

/// A horizontal grid line across the plot at `y`, labelled on the left.
fn gridline(out: &mut String, y: f64, label: &str) {
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
        WIDTH - RIGHT,
        LEFT - 6.0,
        y + 4.0
    );
}

pub fn draw(p: &Params, loads: &[(&str, Vec<f64>)], series: &[Series]) -> String {
    let block = 2.0 * PANEL + 90.0;
    let height = 40.0 + block * loads.len() as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="10" y="18" font-size="13" font-weight="bold">Replicas on three signals (model: {} threads per pod, {} ms tasks, scrape {} s, HPA sync {} s, pod start {} s)</text>"#,
        p.pod_threads, p.cost_ms, p.scrape_s, p.sync_s, p.pod_start_s
    );
    let plot = WIDTH - LEFT - RIGHT;
    for (s, (name, load)) in loads.iter().enumerate() {
        let top = 40.0 + block * s as f64;
        let seconds = load.len() as f64;
        let x = |t: f64| LEFT + t / seconds * plot;
        // Panel 1: pods, and the load in pods' worth.
        let max_pods = f64::from(p.max_replicas) + 1.0;
        let y1 = |v: f64| top + 20.0 + PANEL - v / max_pods * PANEL;
        let _ = writeln!(
            out,
            r#"<text x="10" y="{}" font-weight="bold">{name}: pods</text>"#,
            top + 12.0
        );
        for v in (0..=p.max_replicas).step_by(5) {
            gridline(&mut out, y1(f64::from(v)), &v.to_string());
        }
        polyline(
            &mut out,
            load.iter().enumerate().map(|(t, &v)| (x(t as f64), y1(v))),
            "#999",
            r#"stroke-dasharray="2,2""#,
        );
        let needed = |v: f64| v / (p.busy_target / p.pod_threads as f64);
        polyline(
            &mut out,
            load.iter().enumerate().map(|(t, &v)| (x(t as f64), y1(needed(v)))),
            "#bbb",
            "",
        );
        for series in series.iter().filter(|x| x.scenario == s) {
            polyline(
                &mut out,
                series.replicas.iter().enumerate().map(|(t, &v)| (x(t as f64), y1(f64::from(v)))),
                color(series.rule),
                "",
            );
        }
        // Panel 2: p99 wait per 10 s, log scale from 1 ms to 100 s.
        let top2 = top + PANEL + 45.0;
        let y2 = |ms: f64| top2 + PANEL - ((ms.max(1.0)).log10() / 5.0).min(1.0) * PANEL;
        let _ = writeln!(
            out,
            r#"<text x="10" y="{}" font-weight="bold">{name}: p99 queue wait per 10 s</text>"#,
            top2 - 8.0
        );
        for (ms, label) in [
            (1.0, "1 ms"),
            (10.0, "10 ms"),
            (100.0, "100 ms"),
            (1000.0, "1 s"),
            (10_000.0, "10 s"),
            (100_000.0, "100 s"),
        ] {
            gridline(&mut out, y2(ms), label);
        }
        for series in series.iter().filter(|x| x.scenario == s) {
            // Windows in which no task started (past the end) are left out.
            let windows =
                series.p99.iter().enumerate().filter(|&(w, _)| (w as f64 * 10.0) < seconds);
            polyline(
                &mut out,
                windows.map(|(w, &v)| (x(w as f64 * 10.0 + 5.0), y2(v))),
                color(series.rule),
                "",
            );
        }
        for minute in (0..=(seconds as u64 / 60)).step_by(2) {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{minute} min</text>"#,
                x(minute as f64 * 60.0),
                top2 + PANEL + 14.0
            );
        }
        // Legend.
        let mut ly = top + 30.0;
        for (label, stroke, dash) in [
            ("queue-age+busy", color("queue-age+busy"), ""),
            ("queue-age only", color("queue-age"), ""),
            ("cpu 70 %", color("cpu"), ""),
            ("load (pods at 100 %)", "#999", r#"stroke-dasharray="2,2""#),
            ("pods at 70 %", "#bbb", ""),
        ] {
            let lx = LEFT + plot + 12.0;
            let _ = writeln!(
                out,
                r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{stroke}" stroke-width="2" {dash}/><text x="{}" y="{}">{label}</text>"#,
                lx + 20.0,
                lx + 25.0,
                ly + 4.0
            );
            ly += 16.0;
        }
    }
    out.push_str("</svg>\n");
    out
}
