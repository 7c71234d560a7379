//! The `kafka-pcap` command: parses arguments, runs the pipeline on each capture, and maps
//! errors to exit codes (0: every input was read; 2: an input could not be opened or is not a
//! capture). A closed standard output (`| head`) ends the run quietly with 0.

use clap::{Parser, ValueEnum};
use kafka_pcap::kafka::api::api_name;
use kafka_pcap::kafka::apis::write_txn_markers::TransactionResult;
use kafka_pcap::kafka::event::Record;
use kafka_pcap::output::filter::{Filter, FilterSink};
use kafka_pcap::output::stats;
use kafka_pcap::output::text::TextWriter;
use kafka_pcap::output::{NdjsonWriter, PairSink, Sink};
use kafka_pcap::stats::Stats;
use kafka_pcap::{run, Config, Error, DEFAULT_MAX_FRAME_SIZE};
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Decode Kafka WriteTxnMarkers (API key 27) requests and responses from pcap/pcapng captures
/// into one JSON object per line.
#[derive(Parser, Debug)]
#[command(
    name = "kafka-pcap",
    version,
    override_usage = "kafka-pcap [OPTIONS] <CAPTURE>...\n       kafka-pcap --generate <WHAT>",
    after_help = "Examples:\n  \
        kafka-pcap broker.pcap\n  \
        kafka-pcap --port 9093 --port 29092 broker.pcapng | jq 'select(.event_type==\"kafka\")'\n  \
        tcpdump -i any -U -w - 'tcp' | kafka-pcap -\n\n\
        Exit codes: 0 when every input was read (anomalies included) or standard output was\n\
        closed early; 2 when an input could not be opened, is not a capture or could not be\n\
        read (the other inputs are still read), or the arguments are wrong."
)]
struct Cli {
    /// Capture files (pcap or pcapng, told apart by their magic number); `-` reads standard input.
    #[arg(required = true, value_name = "CAPTURE")]
    captures: Vec<PathBuf>,

    /// Also treat this TCP port as a Kafka broker port (repeatable). 9092 always is; other
    /// ports are found from the bytes of each connection.
    #[arg(long = "port", value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    ports: Vec<u16>,

    /// Largest plausible Kafka frame, in bytes (8 to 4294967295); larger size prefixes are reported as
    /// `frame_too_large` and framing resynchronises.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = DEFAULT_MAX_FRAME_SIZE,
        value_parser = clap::value_parser!(u32).range(8..)
    )]
    max_frame_size: u32,

    /// Memory budget for everything held from one packet to the next (connections,
    /// out-of-order segments, frames being decoded, waiting requests, records held for --pair):
    /// bytes, or with K, M or G (at least 64K). Past it the oldest or largest holding is given
    /// up, with a `memory_limit` anomaly; captures read at once (-j N) get 1/N of it each.
    #[arg(long, value_name = "SIZE", default_value = "40M", value_parser = kafka_pcap::memory::parse_limit)]
    memory_limit: usize,

    /// Read this many captures at once when several are given (default: the number of cores).
    /// Each capture's records stay together, in the order the captures were given.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,

    /// After each capture, a summary of all of it (filters do not narrow it): packets, TCP
    /// streams, Kafka frames and latency per API, WriteTxnMarkers versions, COMMIT/ABORT
    /// counts, markers per producer id, error codes, anomalies by kind. `text` (the default) goes to standard error; `json` is a last
    /// `"event_type":"stats"` record on standard output. Give the format with `=`:
    /// `--stats=json` (`--stats json` would read `json` as a capture).
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "text")]
    stats: Option<StatsFormat>,

    /// Output format: `ndjson` (one JSON object per line, the documented schema), `json` (the
    /// same objects as one pretty array per capture), `text` (one summary line per record) or
    /// `tree` (the text line, then every field of a decoded frame with its byte offset and
    /// size).
    #[arg(long, value_name = "FORMAT", default_value = "ndjson")]
    format: Format,

    /// With `--format tree`: a hex dump of each frame after its tree.
    #[arg(short = 'x', long)]
    hex: bool,

    /// Keep only WriteTxnMarkers markers of this producer id (requests, and their responses).
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    producer_id: Option<i64>,

    /// Keep only WriteTxnMarkers markers that name this topic (requests, and their responses).
    #[arg(long, value_name = "NAME")]
    topic: Option<String>,

    /// Keep only COMMIT or ABORT markers (requests, and their responses); any case.
    #[arg(long, value_name = "RESULT", ignore_case = true)]
    result: Option<ResultArg>,

    /// Keep only WriteTxnMarkers exchanges whose response carries a non-zero error code; with --producer-id,
    /// --topic or --result, in that producer's marker, a partition of that topic, a marker
    /// with that result (requests are written when their response arrives).
    #[arg(long)]
    errors: bool,

    /// Keep only this TCP stream (its anomalies included).
    #[arg(long, value_name = "INDEX")]
    stream: Option<u64>,

    /// One record per request/response exchange (`"event_type":"exchange"`: both bodies, the
    /// latency), written when the response arrives, or at the end for requests never answered.
    #[arg(long)]
    pair: bool,

    /// A record for every Kafka message of every API (header fields, size, pairing and
    /// latency; bodies are decoded for WriteTxnMarkers, EndTxn and InitProducerId).
    #[arg(long)]
    all_apis: bool,

    /// No progress bar (it shows only while standard error is a terminal anyway).
    #[arg(short, long)]
    quiet: bool,

    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) or the man page
    /// (man) generated from these options, and exit.
    #[arg(long, value_name = "WHAT", exclusive = true)]
    generate: Option<Generate>,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Ndjson,
    Json,
    Text,
    Tree,
}

/// `--stats=FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatsFormat {
    Text,
    Json,
}

/// `--result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ResultArg {
    Commit,
    Abort,
}

/// `--generate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Generate {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
    Man,
}

/// Writes the completion script or man page asked for by `--generate`.
fn generate(what: Generate) -> io::Result<()> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let mut cmd = Cli::command();
    let mut out = io::stdout().lock();
    let shell = match what {
        Generate::Man => return clap_mangen::Man::new(cmd).render(&mut out),
        Generate::Bash => Shell::Bash,
        Generate::Zsh => Shell::Zsh,
        Generate::Fish => Shell::Fish,
        Generate::Elvish => Shell::Elvish,
        Generate::Powershell => Shell::PowerShell,
    };
    clap_complete::generate(shell, &mut cmd, "kafka-pcap", &mut out);
    Ok(())
}

/// The chosen output format.
enum Writer<W: Write> {
    Ndjson(NdjsonWriter<W>),
    Text(TextWriter<W>),
}

impl<W: Write> Writer<W> {
    fn new(out: W, format: Format, hex: bool) -> Self {
        match format {
            Format::Text => Writer::Text(TextWriter::new(out)),
            Format::Tree => Writer::Text(TextWriter::tree(out, hex)),
            Format::Json => Writer::Ndjson(NdjsonWriter::pretty_array(out)),
            Format::Ndjson => Writer::Ndjson(NdjsonWriter::new(out, None)),
        }
    }

    /// Ends one capture's output (closes the `--format json` array).
    fn end_capture(&mut self) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.end_array(),
            Writer::Text(w) => w.flush(),
        }
    }

    fn set_capture(&mut self, capture: Option<String>) {
        match self {
            Writer::Ndjson(w) => w.set_capture(capture),
            Writer::Text(w) => w.set_capture(capture),
        }
    }

    fn set_line_buffered(&mut self, on: bool) {
        match self {
            Writer::Ndjson(w) => w.set_line_buffered(on),
            Writer::Text(w) => w.set_line_buffered(on),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.flush(),
            Writer::Text(w) => w.flush(),
        }
    }

    fn write_stats(&mut self, stats: &serde_json::Value) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.write_stats(stats),
            // The documented stats record, as JSON, also among text lines.
            Writer::Text(w) => w.write_line(
                &serde_json::json!({"event_type": "stats", "stats": stats}).to_string(),
            ),
        }
    }
}

impl<W: Write> Sink for Writer<W> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.record(rec),
            Writer::Text(w) => w.record(rec),
        }
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.exchange(request, response),
            Writer::Text(w) => w.exchange(request, response),
        }
    }
}

impl Cli {
    fn filter(&self) -> Filter {
        Filter {
            producer_id: self.producer_id,
            topic: self.topic.clone(),
            result: self.result.map(|r| match r {
                ResultArg::Commit => TransactionResult::Commit,
                ResultArg::Abort => TransactionResult::Abort,
            }),
            errors: self.errors,
            stream: self.stream,
        }
    }
}

/// How one input ended: read (records written; with `--stats=text`, the summary for standard
/// error), or an error line for standard error.
enum Outcome {
    Read(Option<String>),
    Failed(String),
}

/// What every input of a run is read with.
#[derive(Clone)]
struct Run {
    config: Config,
    stats: Option<StatsFormat>,
    filter: Filter,
    pair: bool,
    format: Format,
    hex: bool,
}

impl Run {
    fn of(cli: &Cli) -> Self {
        let mut config = Config {
            max_frame_size: cli.max_frame_size,
            all_apis: cli.all_apis,
            keep_frames: cli.format == Format::Tree,
            hold_requests: cli.pair || cli.filter().is_active(),
            memory: kafka_pcap::memory::Memory::new(cli.memory_limit),
            ..Config::default()
        };
        for p in &cli.ports {
            if !config.kafka_ports.contains(p) {
                config.kafka_ports.push(*p);
            }
        }
        Run {
            config,
            stats: cli.stats,
            filter: cli.filter(),
            pair: cli.pair,
            format: cli.format,
            hex: cli.hex,
        }
    }

    /// A writer of the chosen format on `out`.
    fn writer<W: Write>(&self, out: W) -> Writer<W> {
        Writer::new(out, self.format, self.hex)
    }
}

/// Runs one input into `out`. A closed or failing output is returned as the error; problems
/// with the input itself are an [`Outcome::Failed`] line.
fn run_one<W: Write>(
    path: &Path,
    run_with: &Run,
    progress: bool,
    out: &mut Writer<W>,
) -> Result<Outcome, io::Error> {
    let Run {
        config,
        stats,
        filter,
        pair,
        ..
    } = run_with;
    let (stats, pair) = (*stats, *pair);
    // Each capture has a budget of its own: what one held does not count for the next.
    let config = &Config {
        memory: config.memory.fresh(),
        ..config.clone()
    };
    let name = path.display();
    let bar = progress.then(|| progress_bar(path));
    let mut pairing = PairSink::with_memory(out, pair, &config.memory);
    let mut filtered = FilterSink::new(&mut pairing, filter.clone());
    let result = if is_stdin(path) {
        run(
            Progress::new(io::stdin(), bar.clone()),
            config,
            &mut filtered,
        )
    } else {
        match File::open(path) {
            Ok(f) => {
                if let (Some(b), Ok(m)) = (&bar, f.metadata()) {
                    b.set_length(m.len());
                }
                run(Progress::new(f, bar.clone()), config, &mut filtered)
            }
            Err(e) => {
                let mut line = format!("kafka-pcap: {name}: cannot open: {e}");
                let bare = path.as_os_str();
                if stats.is_some() && (bare == "json" || bare == "text") {
                    // `--stats json` reads `json` as a capture: the value needs `=`.
                    line.push_str(&format!(" (for a {name} summary, write --stats={name})"));
                }
                return Ok(Outcome::Failed(line));
            }
        }
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let kept = filtered.kept();
    drop(filtered);
    if result.is_ok() {
        pairing.finish()?;
    }
    drop(pairing);
    if let (Ok(counts), Some(StatsFormat::Json)) = (&result, stats) {
        out.write_stats(&stats::to_json(counts))?;
    }
    out.end_capture()?;
    let shown = if is_stdin(path) {
        "standard input".to_string()
    } else {
        name.to_string()
    };
    match result {
        Ok(counts) => {
            let mut text = String::new();
            if !filter.is_active() && !config.all_apis && counts.messages == 0 {
                // An empty output should say whether Kafka was there at all.
                text.push_str(&nothing_found(&shown, &counts));
            }
            if filter.is_active() && kept == 0 {
                // Say so, or an empty output looks like a failure.
                let wtm = counts.write_txn_markers_messages();
                text.push_str(&format!(
                    "kafka-pcap: {shown}: no message matched the filters \
                     ({wtm} WriteTxnMarkers messages read)\n"
                ));
            }
            if let Some(StatsFormat::Text) = stats {
                text.push_str(&format!(
                    "kafka-pcap: stats for {shown}:\n{}",
                    stats::to_text(&counts)
                ));
            }
            Ok(Outcome::Read((!text.is_empty()).then_some(text)))
        }
        Err(Error::Write(e)) => Err(e),
        Err(e) if is_stdin(path) => Ok(Outcome::Failed(format!("kafka-pcap: standard input: {e}"))),
        Err(e) => Ok(Outcome::Failed(format!("kafka-pcap: {name}: {e}"))),
    }
}

/// The note for a capture that gave no WriteTxnMarkers record: which other Kafka traffic was
/// read (and that `--all-apis` lists it), or that no Kafka was recognised at all.
fn nothing_found(shown: &str, counts: &Stats) -> String {
    let requests: u64 = counts.frames.requests.values().sum();
    let wtm = counts.frames.requests.get(&27).copied().unwrap_or(0)
        + counts.frames.responses.get(&27).copied().unwrap_or(0);
    if wtm > 0 {
        format!(
            "kafka-pcap: {shown}: {wtm} WriteTxnMarkers frames were read but none decoded (the \
             anomalies say why)\n"
        )
    } else if requests > 0 {
        let apis: Vec<String> = counts
            .frames
            .requests
            .iter()
            .map(|(k, n)| format!("{}:{n}", api_name(*k).unwrap_or("unknown")))
            .collect();
        format!(
            "kafka-pcap: {shown}: no WriteTxnMarkers message; Kafka requests of other APIs \
             read: {} (--all-apis lists them)\n",
            apis.join(" ")
        )
    } else if counts.anomalies
        == counts
            .anomalies_by_kind
            .get("bad_timestamp")
            .copied()
            .unwrap_or(0)
    {
        let streams = match counts.streams {
            0 => "no TCP stream".to_string(),
            1 => "1 TCP stream".to_string(),
            n => format!("{n} TCP streams"),
        };
        format!(
            "kafka-pcap: {shown}: no Kafka traffic recognised in {streams} (a broker on a port \
             other than 9092 is found from its requests' first bytes; name it with --port if not)\n"
        )
    } else {
        String::new()
    }
}

/// A progress bar on standard error for reading `path` (its length is set once known).
fn progress_bar(path: &Path) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        None,
        indicatif::ProgressDrawTarget::stderr_with_hz(5),
    );
    let style = indicatif::ProgressStyle::with_template(
        "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(path.display().to_string());
    bar
}

/// A reader that moves a progress bar by the bytes it reads.
struct Progress<R> {
    inner: R,
    bar: Option<indicatif::ProgressBar>,
}

impl<R> Progress<R> {
    fn new(inner: R, bar: Option<indicatif::ProgressBar>) -> Self {
        Progress { inner, bar }
    }
}

impl<R: io::Read> io::Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(b) = &self.bar {
            b.inc(n as u64);
        }
        Ok(n)
    }
}

/// Whether the argument names standard input (`-`).
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The input's name for the `capture` field (lossy for names that are not UTF-8).
fn capture_name(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// One finished input of a parallel run: how it ended, and its records as NDJSON.
/// What a worker of [`run_parallel`] hands back: how the input went, and where its output is:
/// a temporary file (or why that file failed), or `None` when it went straight to standard
/// output.
type Finished = (Result<Outcome, io::Error>, Option<Result<Spill, io::Error>>);

/// Exit status after an output error: a closed pipe (`| head`) is success.
fn output_failed(e: io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    say(&format!("kafka-pcap: writing output: {e}\n"));
    ExitCode::from(2)
}

/// Writes `text` to standard error. A standard error that cannot be written (`2>/dev/full`)
/// loses the text but never stops the run (`eprint!` would panic).
fn say(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Parses the arguments. `--help` and `--version` are written to standard output and exit 0,
/// or 2 when it cannot be written (a full disk); errors in the arguments
/// exit 2 with clap's message.
fn parse_args() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            match e.print().and_then(|()| io::stdout().flush()) {
                Ok(()) => Err(ExitCode::SUCCESS),
                Err(e) => Err(output_failed(e)),
            }
        }
        Err(e) => e.exit(),
    }
}

/// Says on standard error how one input ended (its summary, or why it failed, which makes
/// the exit status 2); an output error ends the run with the exit status returned.
fn report(outcome: Result<Outcome, io::Error>, status: &mut ExitCode) -> Result<(), ExitCode> {
    match outcome {
        Ok(Outcome::Read(text)) => {
            if let Some(text) = text {
                say(&text);
            }
            Ok(())
        }
        Ok(Outcome::Failed(line)) => {
            say(&format!("{line}\n"));
            *status = ExitCode::from(2);
            Ok(())
        }
        Err(e) => Err(output_failed(e)),
    }
}

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if let Some(what) = cli.generate {
        return match generate(what) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => output_failed(e),
        };
    }
    if cli.hex && cli.format != Format::Tree {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "-x (hex dump) goes with --format tree: kafka-pcap --format tree -x <CAPTURE>",
            )
            .exit();
    }
    if cli.captures.iter().filter(|p| is_stdin(p)).count() > 1 {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "standard input (-) can be read only once; give it once",
            )
            .exit();
    }
    let run_with = Run::of(&cli);
    let jobs = cli.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    if cli.captures.len() > 1 && jobs > 1 {
        return run_parallel(&cli.captures, &run_with, jobs);
    }
    let several = cli.captures.len() > 1;
    let stdout = io::stdout();
    let mut out = run_with.writer(BufWriter::with_capacity(1 << 16, stdout.lock()));
    let mut status = ExitCode::SUCCESS;
    for path in &cli.captures {
        out.set_capture(several.then(|| capture_name(path)));
        out.set_line_buffered(is_stdin(path));
        let progress = !cli.quiet && io::stderr().is_terminal();
        let outcome = run_one(path, &run_with, progress, &mut out);
        // Records first, then what standard error says about them.
        if let Err(e) = out.flush() {
            return output_failed(e);
        }
        if let Err(code) = report(outcome, &mut status) {
            return code;
        }
        // Keep output flowing when reading a live pipe or several files.
        if let Err(e) = out.flush() {
            return output_failed(e);
        }
    }
    status
}

/// An input's output, written to a temporary file while other inputs are read (removed when
/// dropped).
struct Spill {
    path: PathBuf,
}

impl Spill {
    /// A new empty temporary file for input `i` of this process.
    fn create(i: usize) -> io::Result<(Spill, std::fs::File)> {
        let path = std::env::temp_dir().join(format!(
            "kafka-pcap-{}-{i}-{}.out",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok((Spill { path }, file))
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads several inputs on `jobs` threads. An input started when every input before it is
/// written (the head of the output order) streams its records straight to standard output;
/// any other writes them to a temporary file (in `TMPDIR`), copied whole to standard output as
/// soon as every input before it is written. Standard error lines follow the same order.
/// Memory stays that of the runs themselves, whatever the output's size.
fn run_parallel(names: &[PathBuf], run_with: &Run, jobs: usize) -> ExitCode {
    // Each capture read at once gets its share of the budget, so that what one gives up does
    // not depend on how the others are timed.
    let threads = jobs.min(names.len()).max(1);
    let limit = run_with.config.memory.limit();
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    let next = AtomicUsize::new(0);
    // Inputs written so far (all of those before it): the input of that number is the head.
    let head = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Finished)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(names.len()) {
            let tx = tx.clone();
            let (next, head) = (&next, &head);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(name) = names.get(i) else { break };
                let mut mine = run_with.clone();
                mine.config.memory = kafka_pcap::memory::Memory::share_of(limit, threads);
                if head.load(Ordering::Acquire) == i {
                    // Nothing is written to standard output until this input is handed back.
                    let stdout = io::stdout();
                    let mut out = mine.writer(BufWriter::with_capacity(1 << 16, stdout.lock()));
                    out.set_capture(Some(capture_name(name)));
                    let outcome = run_one(name, &mine, false, &mut out);
                    let flushed = match out {
                        Writer::Ndjson(w) => w.into_inner().and_then(|mut f| f.flush()),
                        Writer::Text(w) => w.into_inner().flush(),
                    };
                    let outcome = match (outcome, flushed) {
                        (Ok(o), Ok(())) => Ok(o),
                        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
                    };
                    if tx.send((i, (outcome, None))).is_err() {
                        break;
                    }
                    continue;
                }
                let finished = match Spill::create(i) {
                    Err(e) => (Ok(Outcome::Read(None)), Some(Err(e))),
                    Ok((spill, file)) => {
                        let mut out = mine.writer(io::BufWriter::with_capacity(1 << 16, file));
                        out.set_capture(Some(capture_name(name)));
                        let outcome = run_one(name, &mine, false, &mut out);
                        let flushed = match out {
                            Writer::Ndjson(w) => w.into_inner().and_then(|mut f| f.flush()),
                            Writer::Text(w) => w.into_inner().flush(),
                        };
                        match (outcome, flushed) {
                            // Writing the temporary file failed: that is the error to report.
                            (Err(e), _) | (Ok(_), Err(e)) => {
                                (Ok(Outcome::Read(None)), Some(Err(e)))
                            }
                            (Ok(o), Ok(())) => (Ok(o), Some(Ok(spill))),
                        }
                    }
                };
                if tx.send((i, finished)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut status = ExitCode::SUCCESS;
        let mut done: Vec<Option<Finished>> = (0..names.len()).map(|_| None).collect();
        let mut printed = 0;
        for (i, finished) in rx {
            done[i] = Some(finished);
            while let Some(Some((outcome, spill))) = done.get_mut(printed).map(Option::take) {
                printed += 1;
                match spill {
                    // Streamed: already on standard output.
                    None => {}
                    Some(Err(e)) => {
                        next.store(names.len(), Ordering::Relaxed);
                        say(&format!("kafka-pcap: writing a temporary file: {e}\n"));
                        return ExitCode::from(2);
                    }
                    Some(Ok(spill)) => {
                        let mut w = io::stdout().lock();
                        let copied = std::fs::File::open(&spill.path)
                            .and_then(|mut f| io::copy(&mut f, &mut w))
                            .and_then(|_| w.flush());
                        if let Err(e) = copied {
                            // Stop the workers from starting more inputs.
                            next.store(names.len(), Ordering::Relaxed);
                            return output_failed(e);
                        }
                    }
                }
                if let Err(code) = report(outcome, &mut status) {
                    next.store(names.len(), Ordering::Relaxed);
                    return code;
                }
                head.store(printed, Ordering::Release);
            }
        }
        status
    })
}
