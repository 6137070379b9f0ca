//! What a run of the simulation is given: the HPA rule it compares and
//! the model's parameters, with their defaults and command-line flags.

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    QueueAgeBusy,
    QueueAge,
    Cpu,
}

impl Rule {
    pub const ALL: [Rule; 3] = [Rule::QueueAgeBusy, Rule::QueueAge, Rule::Cpu];
    pub fn name(self) -> &'static str {
        match self {
            Rule::QueueAgeBusy => "queue-age+busy",
            Rule::QueueAge => "queue-age",
            Rule::Cpu => "cpu",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Params {
    pub pod_threads: usize,
    pub cost_ms: u64,
    pub loop_cost_ms: f64,
    pub min_replicas: u32,
    pub max_replicas: u32,
    pub scrape_s: u64,
    /// metrics-server's resolution: how often the CPU the HPA reads is sampled.
    pub resolution_s: u64,
    pub sync_s: u64,
    pub pod_start_s: u64,
    pub rate_window_s: u64,
    pub age_target_s: f64,
    pub busy_target: f64,
    pub cpu_target: f64,
    pub seed: u64,
    /// The scale-up policies' period (s): +100 % or +4 pods per period.
    pub up_period_s: u64,
    /// Tasks a pod lets wait (the example's MAX_QUEUE); past it, a request gets 503.
    pub max_queue: usize,
    /// Print the timeline of this scenario and rule every 15 s.
    pub trace: Option<(String, String)>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            pod_threads: 2,
            cost_ms: 10,
            loop_cost_ms: 0.5,
            min_replicas: 2,
            max_replicas: 20,
            scrape_s: 10,
            resolution_s: 15,
            sync_s: 15,
            pod_start_s: 15,
            rate_window_s: 40,
            age_target_s: 0.5,
            busy_target: 1.4,
            cpu_target: 0.7,
            seed: 1,
            up_period_s: 15,
            max_queue: 1024,
            trace: None,
        }
    }
}

pub fn parse_args() -> (Params, u64, Option<String>) {
    let mut p = Params::default();
    let mut svg = None;
    let mut seeds = 1;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).unwrap_or_else(|| panic!("{} needs a value", args[i]));
        let number = || {
            value
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{} wants a whole number, not {value}", args[i]))
        };
        match args[i].as_str() {
            "--pod-start" => p.pod_start_s = number(),
            "--scrape" => p.scrape_s = number(),
            "--sync" => p.sync_s = number(),
            "--resolution" => p.resolution_s = number(),
            "--seed" => p.seed = number(),
            "--seeds" => seeds = number(),
            "--up-period" => p.up_period_s = number(),
            "--rate-window" => p.rate_window_s = number(),
            "--age-target-ms" => p.age_target_s = number() as f64 / 1000.0,
            "--busy-target-pct" => p.busy_target = number() as f64 / 100.0 * p.pod_threads as f64,
            "--cpu-target-pct" => p.cpu_target = number() as f64 / 100.0,
            "--svg" => svg = Some(value.clone()),
            "--trace" => {
                let (sc, r) = value.split_once(':').expect("--trace scenario:rule");
                p.trace = Some((sc.to_string(), r.to_string()));
            }
            other => panic!("unknown option {other} (--pod-start s, --scrape s, --resolution s, --sync s, --seed n, --seeds n, --up-period s, --rate-window s, --age-target-ms ms, --busy-target-pct %, --cpu-target-pct %, --trace scenario:rule, --svg path)"),
        }
        i += 2;
    }
    assert!(
        p.scrape_s > 0 && p.sync_s > 0 && p.resolution_s > 0,
        "--scrape, --resolution and --sync must be above 0"
    );
    assert!(seeds > 0, "--seeds must be above 0");
    (p, seeds, svg)
}
