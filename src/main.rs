//! The `kafka-pcap` command: parses arguments, runs the pipeline on each capture, and maps
//! errors to exit codes (0: every input was read; 2: an input could not be opened or is not a
//! capture). A closed standard output (`| head`) ends the run quietly with 0.

use clap::{Parser, ValueEnum};
use kafka_pcap::kafka::api::{api_name, MAX_API_KEY};
use kafka_pcap::kafka::apis::write_txn_markers::TransactionResult;
use kafka_pcap::kafka::event::Record;
use kafka_pcap::output::filter::{Filter, FilterSink, TimeBound, TopicPattern};
use kafka_pcap::output::offload::{offloaded, IN_FLIGHT};
use kafka_pcap::output::pcap::{write_packets, PacketCollector, PacketSet, PcapFormat};
use kafka_pcap::output::report::{ReportCollector, ReportData};
use kafka_pcap::output::stats;
use kafka_pcap::output::text::TextWriter;
use kafka_pcap::output::{AnomalyLevel, MessageGate, NdjsonWriter, PairSink, Sink};
use kafka_pcap::stats::Stats;
use kafka_pcap::{run, Config, Error, DEFAULT_MAX_FRAME_SIZE};
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Tell what happened to each Kafka transaction from pcap/pcapng captures of broker traffic
/// (--transactions), and decode its messages, WriteTxnMarkers (API key 27) by default, into
/// one JSON object per line.
#[derive(Parser, Debug)]
#[command(
    name = "kafka-pcap",
    version,
    override_usage = "kafka-pcap [OPTIONS] <CAPTURE>...\n       kafka-pcap --generate <WHAT>",
    after_help = "Examples:\n  \
        kafka-pcap --transactions --format text broker.pcap   (what happened to each transaction)\n  \
        kafka-pcap --transactions --outcome aborted --outcome hanging --format text broker.pcap\n  \
        kafka-pcap --all-apis --producer-id 1001 --format text broker.pcap\n  \
        kafka-pcap broker.pcap   (WriteTxnMarkers records, NDJSON)\n  \
        kafka-pcap --port 9093 --port 29092 broker.pcapng | jq 'select(.event_type==\"kafka\")'\n  \
        tcpdump -i any -U -w - 'tcp' | kafka-pcap -\n\n\
        Exit codes: 0 when every input was read (anomalies included) or standard output was\n\
        closed early; 2 when an input could not be opened, is not a capture or could not be\n\
        read (the other inputs are still read), or the arguments are wrong; 130/143 after\n\
        SIGINT/SIGTERM while reading standard input (the run finished as at its end)."
)]
struct Cli {
    /// Capture files (pcap or pcapng, plain or compressed with gzip, zstd, lz4 or xz, told apart
    /// by their magic number); `-` reads standard input.
    #[arg(required = true, value_name = "CAPTURE")]
    captures: Vec<PathBuf>,

    /// Also treat this TCP port as a Kafka broker port (repeatable). 9092 always is; other
    /// ports are found from the bytes of each connection.
    #[arg(long = "port", value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    ports: Vec<u16>,

    /// Also read UDP datagrams to this port as VXLAN (repeatable); 4789 and 8472 always are.
    /// Traffic inside VXLAN, Geneve, GRE, ERSPAN, IP-in-IP, MPLS and PPPoE is decoded as if
    /// captured plain, its records carrying a `tunnel`.
    #[arg(long = "vxlan-port", value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    vxlan_ports: Vec<u16>,

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
    /// up, with a `memory_limit` anomaly; captures read at once get 1/K of it each, K the
    /// smaller of -j and the number of captures.
    #[arg(long, value_name = "SIZE", default_value = "40M", value_parser = kafka_pcap::memory::parse_limit)]
    memory_limit: usize,

    /// Read this many captures at once when several are given (default: the number of cores).
    /// Each capture's records stay together, in the order the captures were given. A capture
    /// file (classic pcap) is also read ahead on a core of its own when the cores allow two per
    /// capture, and with --all-apis or --api Produce/Fetch one capture's records are written
    /// on a second core; -j 1 uses one core.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,

    /// After each capture, a summary of all of it (filters do not narrow it): packets, TCP
    /// streams, Kafka frames and latency per API, WriteTxnMarkers versions, COMMIT/ABORT
    /// counts, markers per producer id, error codes, anomalies by kind. `text` (the default) goes to standard error; `json` is a last
    /// `"event_type":"stats"` record on standard output. Give the format with `=`:
    /// `--stats=json` (`--stats json` is refused: it would read `json` as a capture).
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "text", ignore_case = true)]
    stats: Option<StatsFormat>,

    /// Output format: `ndjson` (one JSON object per line, the documented schema), `json` (the
    /// same objects as one pretty array per capture), `text` (one summary line per record) or
    /// `tree` (the text line, then every field of a decoded frame with its byte offset and
    /// size).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "ndjson",
        ignore_case = true
    )]
    format: Format,

    /// With `--format tree`: a hex dump of each frame after its tree.
    #[arg(short = 'x', long)]
    hex: bool,

    /// Keep only WriteTxnMarkers markers of this producer id (requests, and their responses);
    /// with --api or --all-apis, also the messages of other APIs whose bodies name it; with
    /// --transactions, its transactions. Repeatable, or comma-separated: any of them. Decimal
    /// or hex (0x3e8).
    #[arg(
        long = "producer-id",
        value_name = "ID",
        allow_negative_numbers = true,
        value_delimiter = ',',
        value_parser = parse_id
    )]
    producer_ids: Vec<i64>,

    /// Keep only WriteTxnMarkers requests with a marker that names this topic (whole, with
    /// their responses); with --api or --all-apis, also the messages of other APIs whose bodies
    /// name it (by topic id too, for Fetch v13+ and Produce v13, when the capture's Metadata
    /// responses are decoded: --all-apis or --api Metadata).
    /// Repeatable, or comma-separated (any of them); a shell glob matches many: 'orders-*',
    /// 'txn-?', '[ab]*'.
    #[arg(
        long = "topic",
        value_name = "NAME|GLOB",
        value_delimiter = ',',
        value_parser = TopicPattern::new
    )]
    topics: Vec<TopicPattern>,

    /// Keep only COMMIT or ABORT markers (requests, and their responses), and EndTxn requests
    /// asking for it; any case. With --transactions, the transactions that committed (commit)
    /// or aborted (abort).
    #[arg(long, value_name = "RESULT", ignore_case = true)]
    result: Option<ResultArg>,

    /// Keep only WriteTxnMarkers exchanges whose response carries a non-zero error code; with --producer-id,
    /// --topic or --result, in that producer's marker, a partition of that topic, a marker
    /// with that result (requests are written when their response arrives); with --api or
    /// --all-apis, also the exchanges of other APIs whose response has one. With
    /// --transactions, the transactions with an error in any of their messages, a marker left
    /// out of its response, ended by their coordinator (their producer fenced, or their
    /// timeout), hanging at the capture's end, committed in part, or ended against what their
    /// client was told (an accepted commit aborted, an accepted abort committed).
    #[arg(long)]
    errors: bool,

    /// Keep only the connections with this address (and port, when given) at either end:
    /// IP, IP:PORT or [IPv6]:PORT (repeatable, or comma-separated: any of them); an IP also
    /// keeps the traffic of tunnels with that outer address; with --transactions, the
    /// transactions whose coordinator, marker broker or partition leader it is.
    #[arg(long = "host", value_name = "IP[:PORT]", value_delimiter = ',', value_parser = parse_host)]
    hosts: Vec<(std::net::IpAddr, Option<u16>)>,

    /// Keep only this TCP stream (its anomalies included); repeatable, or comma-separated: any
    /// of them. Transactions span connections: with --transactions it needs --api or
    /// --all-apis, and chooses their message records only.
    #[arg(long = "stream", value_name = "INDEX", value_delimiter = ',', value_parser = parse_stream)]
    streams: Vec<u64>,

    /// Keep only records at or after this time: RFC 3339 (2026-12-01T10:00:00Z, any offset;
    /// UTC without one), a time of day in UTC (08:41:53, as --format text shows times: the one
    /// nearest the capture's first packet), or an offset from the capture's first packet
    /// (+90s, +5m, +1.5h, +250ms; units ns, us, ms, s, m, h, seconds without one). Each record
    /// goes by its own time; with --pair or --errors an exchange goes by its response's (its request
    /// comes with it); a transaction is kept when the time from its first message to its
    /// record meets the window.
    #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
    since: Option<TimeBound>,

    /// Keep only records at or before this time (as --since; a time of day is the first such
    /// time at or after --since, when --since is given).
    #[arg(long, value_name = "TIME", value_parser = TimeBound::parse)]
    until: Option<TimeBound>,

    /// One record per request/response exchange (`"event_type":"exchange"`: both bodies, the
    /// latency), written when the response arrives, or for a request never answered when its
    /// connection ends (or a later response passes it over).
    #[arg(long)]
    pair: bool,

    /// A record for every Kafka message of every API (header fields, size, pairing and
    /// latency; bodies are decoded for WriteTxnMarkers, EndTxn, InitProducerId,
    /// AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, FindCoordinator,
    /// DescribeTransactions, ListTransactions, DescribeProducers, Produce, Fetch and
    /// Metadata).
    #[arg(long)]
    all_apis: bool,

    /// Records of this API only, by Kafka's name or key (`--api EndTxn --api 27`, or
    /// `--api EndTxn,27`; names ignore case): its messages with their bodies where decoded (the APIs --all-apis
    /// lists), header fields otherwise. Replaces the default WriteTxnMarkers; --all-apis wins.
    #[arg(long = "api", value_name = "NAME|KEY", value_delimiter = ',', value_parser = parse_api)]
    apis: Vec<i16>,

    /// One record per transaction (`"event_type":"transaction"`), joined across every
    /// connection: transactional id, producer id and epoch, outcome (committed, aborted, open,
    /// unknown), who ended it and why (timeout, fenced), its partitions with their data and
    /// markers, offsets, errors, times and frames. Message records are left out unless --api
    /// or --all-apis asks for them.
    #[arg(long)]
    transactions: bool,

    /// With --transactions: keep only the transactions (and the anomalies about them) of this
    /// transactional id (repeatable; not comma-separated: an id may hold a comma).
    #[arg(long = "transactional-id", value_name = "ID")]
    transactional_ids: Vec<String>,

    /// With --transactions: keep only transactions with this outcome (repeatable); `hanging`
    /// keeps those hanging at the capture's end ("hanging": true: open past their timeout, or
    /// a partition's marker never came), whatever their outcome.
    #[arg(
        long = "outcome",
        value_name = "OUTCOME",
        ignore_case = true,
        value_delimiter = ','
    )]
    outcomes: Vec<OutcomeArg>,

    /// Stop after this many packets of each capture (as tshark's -c): the run ends as at the
    /// end of its input (pending requests reported, --stats written).
    #[arg(short = 'c', long = "count", value_name = "N")]
    count: Option<u64>,

    /// Which anomalies to write: `relevant` (the default) those that lost, damaged or put in
    /// doubt a message the output is about (WriteTxnMarkers; the --api APIs; every API with
    /// --all-apis; the transaction messages with --transactions; under --producer-id,
    /// --topic or --result, only APIs whose bodies can name what they ask for) and every
    /// capture, packet and TCP problem of no API; `all`; `none`. --stats counts them all.
    #[arg(
        long,
        value_name = "LEVEL",
        default_value = "relevant",
        ignore_case = true
    )]
    anomalies: AnomaliesArg,

    /// Also write the packets that carried the records written (every segment of each
    /// message's frame, its connection's handshake, the packet of each anomaly; a
    /// transaction's, those of all its messages) to FILE, as they were captured: classic pcap
    /// (pcapng when FILE ends in .pcapng), for Wireshark or a colleague. One capture file only
    /// (it is read twice), not standard input.
    #[arg(long, value_name = "FILE")]
    write_pcap: Option<PathBuf>,

    /// Also write FILE (an HTML page, say out.html): one self-contained page of the capture's transactions (a
    /// timeline by transactional id, marker round trips, marker errors), which opens offline
    /// in any browser. Implies --transactions. One capture only; with --quiet the records are
    /// not written to standard output.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// No progress bar (it shows only while standard error is a terminal anyway); with
    /// --report, no records on standard output either.
    #[arg(short, long)]
    quiet: bool,

    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) or the man page
    /// (man) generated from these options, and exit.
    #[arg(long, value_name = "WHAT", exclusive = true, ignore_case = true)]
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

/// `--anomalies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AnomaliesArg {
    Relevant,
    All,
    None,
}

/// `--outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutcomeArg {
    Committed,
    Aborted,
    Open,
    Unknown,
    Hanging,
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
    // Written to memory first: clap_complete panics on a write error (a closed pipe, a full
    // disk), which must be the exit codes' "output could not be written" instead.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "kafka-pcap", &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// The chosen output format.
enum Writer<W: Write> {
    Ndjson(NdjsonWriter<W>),
    Text(TextWriter<W>),
}

impl<W: Write + Send> Writer<W> {
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

    fn write_stats(
        &mut self,
        record: &serde_json::Map<String, serde_json::Value>,
    ) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.write_stats(record),
            // The documented stats record, as JSON, also among text lines.
            Writer::Text(w) => w.write_line(&serde_json::Value::Object(record.clone()).to_string()),
        }
    }
}

impl<W: Write + Send> Sink for Writer<W> {
    fn transaction(&mut self, t: &kafka_pcap::txn::TransactionRecord) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.transaction(t),
            Writer::Text(w) => w.transaction(t),
        }
    }

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

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        match self {
            Writer::Ndjson(w) => w.response_alone(response),
            Writer::Text(w) => w.response_alone(response),
        }
    }
}

impl Cli {
    fn filter(&self) -> Filter {
        Filter {
            producer_ids: self.producer_ids.clone(),
            topics: self.topics.clone(),
            result: self.result.map(|r| match r {
                ResultArg::Commit => TransactionResult::Commit,
                ResultArg::Abort => TransactionResult::Abort,
            }),
            errors: self.errors,
            streams: self.streams.clone(),
            since: self.since,
            until: self.until,
            hosts: self.hosts.clone(),
            transactional_ids: self.transactional_ids.clone(),
            outcomes: self
                .outcomes
                .iter()
                .map(|o| {
                    o.to_possible_value()
                        .map_or(String::new(), |v| v.get_name().to_string())
                })
                .collect(),
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
    /// `--transactions`: the APIs whose message records are written (`None`: all; empty:
    /// none, only transactions and anomalies); `None` without `--transactions`.
    shown: Option<Vec<i16>>,
    /// `--anomalies`.
    anomalies: AnomalyLevel,
    /// The APIs the output is about, for `--anomalies relevant` (`None`: all).
    about: Option<Vec<i16>>,
    /// `--report --quiet`: no records on standard output.
    quiet_report: bool,
    /// Write the records on a thread of their own ([`kafka_pcap::output::offload`]): set by
    /// `main` where it pays, for a capture file read alone with message bodies to write.
    offload: bool,
}

impl Run {
    fn of(cli: &Cli) -> Self {
        let mut apis = cli.apis.clone();
        if cli.transactions {
            for k in kafka_pcap::txn::APIS {
                if !apis.contains(&k) {
                    apis.push(k);
                }
            }
        }
        let mut config = Config {
            max_frame_size: cli.max_frame_size,
            all_apis: cli.all_apis,
            apis,
            keep_frames: cli.format == Format::Tree,
            write_pcap: cli.write_pcap.is_some(),
            hold_requests: cli.pair || cli.filter().is_active() || cli.transactions,
            transactions: cli.transactions,
            max_packets: cli.count,
            memory: kafka_pcap::memory::Memory::new(cli.memory_limit),
            ..Config::default()
        };
        for p in &cli.vxlan_ports {
            if !config.vxlan_ports.contains(p) {
                config.vxlan_ports.push(*p);
            }
        }
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
            shown: match (cli.transactions, cli.all_apis) {
                (true, false) => Some(cli.apis.clone()),
                _ => None,
            },
            anomalies: match cli.anomalies {
                AnomaliesArg::Relevant => AnomalyLevel::Relevant,
                AnomaliesArg::All => AnomalyLevel::All,
                AnomaliesArg::None => AnomalyLevel::None,
            },
            about: {
                let mut about = (!cli.all_apis).then(|| {
                    let mut about = cli.apis.clone();
                    if cli.transactions {
                        // The transaction messages; Fetch, Metadata and FindCoordinator are
                        // read only for names and offsets.
                        about.extend([0, 22, 24, 25, 26, 27, 28]);
                    }
                    if about.is_empty() {
                        about.push(27);
                    }
                    about
                });
                // Messages the body filters could not pass (a Metadata response under
                // --producer-id) are not what the output is about; a transaction's messages
                // are, whatever they name.
                let filter = cli.filter();
                if !cli.transactions && (0..=MAX_API_KEY).any(|k| !filter.may_pass_api(k)) {
                    let all = || (0..=MAX_API_KEY).collect::<Vec<i16>>();
                    let mut keys = about.take().unwrap_or_else(all);
                    keys.retain(|k| filter.may_pass_api(*k));
                    about = Some(keys);
                }
                about
            },
            quiet_report: cli.report.is_some() && cli.quiet,
            offload: false,
        }
    }

    /// A writer of the chosen format on `out`.
    fn writer<W: Write + Send>(&self, out: W) -> Writer<W> {
        Writer::new(out, self.format, self.hex)
    }
}

/// Files a run writes beside its records (`--write-pcap`, `--report`).
#[derive(Default)]
struct Outputs {
    pcap: Option<OutFile>,
    report: Option<OutFile>,
}

/// A sink that writes nothing (`--report --quiet`).
struct NoRecords;

impl Sink for NoRecords {
    fn record(&mut self, _: &Record) -> io::Result<()> {
        Ok(())
    }

    fn transaction(&mut self, _: &kafka_pcap::txn::TransactionRecord) -> io::Result<()> {
        Ok(())
    }

    fn exchange(&mut self, _: &Record, _: Option<&Record>) -> io::Result<()> {
        Ok(())
    }
}

/// A sink in front of standard output for a run that writes files beside its records
/// (`--report`, `--write-pcap`): once the reader of standard output has gone (a closed pipe,
/// `| head`), the records are dropped instead of ending the run, so that those files are
/// still made from the whole capture.
struct UntilClosed<'a> {
    inner: &'a mut dyn Sink,
    closed: bool,
}

impl UntilClosed<'_> {
    /// `r`, a closed pipe noted and taken as done.
    fn check(&mut self, r: io::Result<()>) -> io::Result<()> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

impl Sink for UntilClosed<'_> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.record(rec);
        self.check(r)
    }

    fn transaction(&mut self, t: &kafka_pcap::txn::TransactionRecord) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.transaction(t);
        self.check(r)
    }

    fn capture_start(&mut self, ts: kafka_pcap::vocab::Timestamp) {
        if !self.closed {
            self.inner.capture_start(ts);
        }
    }

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.response_alone(response);
        self.check(r)
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.exchange(request, response);
        self.check(r)
    }
}

/// Checks `--report FILE` (one capture; FILE not the capture, not another capture, not a
/// directory; standard output only when nothing else goes there: `stdout_taken` says what
/// does, if anything) and creates the file it is written to first.
fn report_output(
    captures: &[PathBuf],
    out: &Path,
    stdout_taken: Option<&str>,
) -> Result<OutFile, String> {
    let shown = out.display();
    if captures.len() != 1 {
        return Err(format!(
            "kafka-pcap: --report draws the transactions of one capture; {} were given",
            captures.len()
        ));
    }
    let stdout = Path::new("/dev/stdout");
    if is_stdin(out) || same_file(out, stdout) {
        let Some(taken) = stdout_taken else {
            // `-q`: nothing else goes to standard output; the page does.
            return beside("--report", stdout);
        };
        return Err(format!(
            "kafka-pcap: --report {shown}: that is standard output, {taken}"
        ));
    }
    if same_file(&captures[0], out) {
        return Err(format!(
            "kafka-pcap: --report {shown} would overwrite the capture being read"
        ));
    }
    if is_capture_file(out) {
        return Err(format!(
            "kafka-pcap: --report {shown} is a capture (pcap or pcapng), which the page would \
             replace; name another file, or remove it first"
        ));
    }
    beside("--report", out)
}

/// Writes the `--report` page of `data` to `report`; the line for standard error.
fn write_report(
    data: &ReportData,
    capture: &str,
    stats: &Stats,
    report: OutFile,
) -> Result<String, String> {
    let shown = report.path.display().to_string();
    let file = report
        .file
        .try_clone()
        .map_err(|e| format!("kafka-pcap: {shown}: {e}"))?;
    let mut w = BufWriter::new(file);
    let written = kafka_pcap::output::report::write_html(data, capture, stats, &mut w)
        .and_then(|()| w.flush());
    match written {
        // Standard output (or another pipe) whose reader went away, as records' (`| head`):
        // no error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe && report.part.is_none() => {
            return Ok(String::new())
        }
        r => r.map_err(|e| format!("kafka-pcap: {shown}: writing: {e}"))?,
    }
    drop(w);
    report.commit()?;
    let budget: String = [
        data.bound_note(),
        data.budget_note(),
        data.decoding_note(stats),
    ]
    .into_iter()
    .flatten()
    .map(|n| format!("kafka-pcap: {shown}: {n}\n"))
    .collect();
    Ok(format!(
        "kafka-pcap: wrote the report of {} transaction{} ({} kept for the page) to \
         {shown}\n{budget}",
        data.transactions,
        if data.transactions == 1 { "" } else { "s" },
        data.bars
    ))
}

/// A file written beside the records (`--write-pcap`, `--report`): a new file beside FILE,
/// renamed to FILE once written, so that FILE is replaced only by a complete file (and is
/// left as it was when the run fails).
struct OutFile {
    path: PathBuf,
    /// The file written first, renamed to `path` at the end; `None` when `path` is not a
    /// regular file (a device, a pipe: `/dev/stdout`), written directly.
    part: Option<PathBuf>,
    file: File,
    /// Renamed to `path`: nothing to remove.
    finished: bool,
}

impl OutFile {
    /// Removes the unfinished file (as dropping it does).
    fn abandon(self) {}

    /// Puts the finished file in place of FILE; the line that says why not.
    fn commit(mut self) -> Result<(), String> {
        if let Some(part) = &self.part {
            std::fs::rename(part, &self.path)
                .map_err(|e| format!("kafka-pcap: {}: cannot write: {e}", self.path.display()))?;
        }
        self.finished = true;
        Ok(())
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if let (false, Some(part)) = (self.finished, &self.part) {
            let _ = std::fs::remove_file(part);
        }
    }
}

/// Whether `path` is a regular file that starts as a pcap or pcapng capture does (a magic
/// number of either byte order, or a pcapng Section Header Block).
fn is_capture_file(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 4];
    let read = File::open(path).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok()
        && matches!(
            head,
            [0xa1, 0xb2, 0xc3, 0xd4]
                | [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0x3c, 0x4d]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0x0a, 0x0d, 0x0d, 0x0a]
        )
}

/// Whether `a` and `b` name the same file (through a symbolic or a hard link too).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Checks `--write-pcap FILE` against the inputs (one capture file, not standard input, not
/// FILE itself) and creates the file it is written to first; or the line that says why not.
fn pcap_output(captures: &[PathBuf], out: &Path) -> Result<OutFile, String> {
    let shown = out.display();
    let input = match captures {
        [one] if is_stdin(one) => {
            return Err(
                "kafka-pcap: --write-pcap reads the capture twice, and standard input \
                        cannot be read again: save it to a file first (tcpdump -w FILE)"
                    .to_string(),
            )
        }
        [one] => one,
        _ => {
            return Err(format!(
                "kafka-pcap: --write-pcap writes the packets of one capture; {} were given \
                 (run once per capture, or merge them first: mergecap -w all.pcap ...)",
                captures.len()
            ))
        }
    };
    if !std::fs::metadata(input).is_ok_and(|m| m.is_file()) && input.exists() {
        return Err(format!(
            "kafka-pcap: --write-pcap reads the capture twice, and {} is not a regular file \
             (a pipe or a device can be read once): save it to a file first",
            input.display()
        ));
    }
    // (Standard output sent to /dev/null with FILE /dev/null too: both thrown away, no mix.)
    let null = same_file(out, Path::new("/dev/null"));
    if is_stdin(out) || (same_file(out, Path::new("/dev/stdout")) && !null) {
        return Err(format!(
            "kafka-pcap: --write-pcap {shown}: that is standard output, where the records go; \
             name a file"
        ));
    }
    if same_file(input, out) {
        return Err(format!(
            "kafka-pcap: --write-pcap {shown} would overwrite the capture being read"
        ));
    }
    // An extract holds only packets of its capture: written as pcapng from a classic pcap,
    // each grows by at most 19 bytes of block over its 16-byte record head and 40 bytes of
    // headers, so an extract is never half again as large as its (uncompressed) capture. An
    // existing capture that is, is another capture, most likely named by two words swapped.
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    if is_capture_file(out)
        && is_capture_file(input)
        && size(out) > size(input).saturating_mul(3) / 2 + 4096
    {
        return Err(format!(
            "kafka-pcap: --write-pcap {shown} is a capture much larger than the one being read \
             ({}), so not an extract of it, and would be replaced: were the two names swapped? \
             Name another file, or remove it first",
            input.display()
        ));
    }
    let name = out.to_string_lossy();
    let lower = name.to_ascii_lowercase();
    if let Some(ext) = [
        ".gz", ".tgz", ".zst", ".zstd", ".xz", ".lzma", ".bz2", ".lz4",
    ]
    .into_iter()
    .find(|e| lower.ends_with(e))
    {
        let ext = &name[name.len() - ext.len()..];
        return Err(format!(
            "kafka-pcap: --write-pcap {shown}: the packets are written uncompressed, so a name \
             ending in {ext} would mislead; name it without {ext} and compress it afterwards"
        ));
    }
    beside("--write-pcap", out)
}

/// Creates the file that becomes `out` once written (beside it, renamed at the end), or opens
/// `out` itself when it is a device or a pipe; or the line that says why not, naming `option`
/// (`--report`, `--write-pcap`).
fn beside(option: &str, out: &Path) -> Result<OutFile, String> {
    let shown = format!("{option} {}", out.display());
    // (`newdir/`, which does not exist yet, names a directory too.)
    if out.is_dir() || out.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(format!(
            "kafka-pcap: {shown}: names a directory; name a file in it ({})",
            out.join(if option == "--report" {
                "report.html"
            } else {
                "out.pcap"
            })
            .display()
        ));
    }
    // A symbolic link is written through: its target is what gets replaced, not the link.
    let target = match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => out.canonicalize().ok(),
        _ => None,
    };
    let out = target.as_deref().unwrap_or(out);
    // The file is replaced by a rename, which its mode would not stop: a read-only file is
    // kept as its owner meant.
    if std::fs::metadata(out).is_ok_and(|m| m.is_file() && m.permissions().readonly()) {
        return Err(format!(
            "kafka-pcap: {shown}: the file is read-only, and would be replaced; name another \
             file, or make it writable first"
        ));
    }
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(name) = name else {
        return Err(format!("kafka-pcap: {shown}: not a file name"));
    };
    let special = std::fs::metadata(out).is_ok_and(|m| !m.is_file());
    let part =
        (!special).then(|| out.with_file_name(format!(".{name}.{}.part", std::process::id())));
    let file = match &part {
        Some(part) => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(part),
        None => std::fs::OpenOptions::new().write(true).open(out),
    }
    .map_err(|e| format!("kafka-pcap: {shown}: cannot create: {e}"))?;
    Ok(OutFile {
        path: out.to_path_buf(),
        part,
        file,
        finished: false,
    })
}

/// Reads `input` again and writes the packets of `set` to `pcap`; the lines for standard
/// error. `records` is how many records were written (messages, exchanges, transactions and
/// anomalies).
fn write_pcap(
    input: &Path,
    set: &PacketSet,
    pcap: OutFile,
    records: u64,
) -> Result<String, String> {
    let shown = pcap.path.display().to_string();
    let f = match File::open(input) {
        Ok(f) => f,
        Err(e) => {
            pcap.abandon();
            return Err(format!(
                "kafka-pcap: {}: cannot open again: {e}",
                input.display()
            ));
        }
    };
    let format = PcapFormat::for_path(&pcap.path);
    let file = match pcap.file.try_clone() {
        Ok(f) => f,
        Err(e) => {
            pcap.abandon();
            return Err(format!("kafka-pcap: {shown}: {e}"));
        }
    };
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let written = write_packets(f, set, format, &mut w);
    drop(w);
    let written = match written {
        Ok(n) => n,
        Err(e) => {
            pcap.abandon();
            return Err(format!("kafka-pcap: {shown}: {e}"));
        }
    };
    pcap.commit()?;
    let mut line = format!(
        "kafka-pcap: wrote {} packets to {shown}: those of the {records} records written",
        written.packets
    );
    match written.acks {
        0 => {}
        1 => line.push_str(", and 1 acknowledgment of them"),
        n => line.push_str(&format!(", and {n} acknowledgments of them")),
    }
    match written.acks_cut {
        0 => {}
        n => line.push_str(&format!(
            " ({n} cut after their TCP header, as a snapshot length cuts: they carried bytes of \
             other messages)"
        )),
    }
    line.push('\n');
    if set.not_kept() > 0 {
        line.push_str(&format!(
            "kafka-pcap: {} packets of the transactions' messages are not in {shown}: a \
             transaction keeps at most {} (each message's last packet is there)\n",
            set.not_kept(),
            kafka_pcap::txn::MAX_PACKETS
        ));
    }
    if written.clamped > 0 {
        line.push_str(&format!(
            "kafka-pcap: {} packets were captured at times {shown} cannot hold (before 1970, or \
             after 2106 in a classic pcap): they carry the nearest it can\n",
            written.clamped
        ));
    }
    if written.other_link_type > 0 {
        line.push_str(&format!(
            "kafka-pcap: {} packets of another link type were left out of {shown}: a classic \
             pcap holds one link type; name the file .pcapng to have them all\n",
            written.other_link_type
        ));
    }
    Ok(line)
}

/// Runs one input into `out`. A closed or failing output is returned as the error; problems
/// with the input itself are an [`Outcome::Failed`] line.
fn run_one<W: Write + Send>(
    path: &Path,
    run_with: &Run,
    progress: bool,
    out: &mut Writer<W>,
    outputs: Outputs,
) -> Result<Outcome, io::Error> {
    let Outputs { mut pcap, report } = outputs;
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
        // Standard input, a FIFO or a device is read as it comes (live input), not a chunk at
        // a time: only a regular file is read ahead.
        read_ahead: config.read_ahead
            && !is_stdin(path)
            && std::fs::metadata(path).is_ok_and(|m| m.is_file()),
        ..config.clone()
    };
    let name = path.display();
    let bar = progress.then(|| progress_bar(path));
    let mut packets = pcap.as_ref().map(|_| PacketSet::new(&config.memory));
    let mut report_data = report
        .as_ref()
        .map(|_| ReportData::charged_to(&config.memory));
    // The input, opened before the records' path is built.
    let input: Box<dyn io::Read + Send> = if is_stdin(path) {
        Box::new(Progress::new(Interruptible::stdin(), bar.clone()))
    } else {
        match File::open(path) {
            Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => {
                return Ok(Outcome::Failed(format!(
                    "kafka-pcap: {name}: is a directory; name the captures in it ({}/*.pcap)",
                    path.display().to_string().trim_end_matches('/')
                )));
            }
            Ok(f) => {
                if let (Some(b), Ok(m)) = (&bar, f.metadata()) {
                    b.set_length(m.len());
                }
                Box::new(Progress::new(f, bar.clone()))
            }
            Err(e) => {
                // (`--stats json`, which would read `json` as a capture, is refused before.)
                return Ok(Outcome::Failed(format!(
                    "kafka-pcap: {name}: cannot open: {e}"
                )));
            }
        }
    };
    // With `offload`, the filters, pairing and the record writer may move to a second thread
    // (once records come densely). The `--write-pcap` and `--report` collectors (and their
    // closed-pipe rule) are not moved: with either, nothing is.
    let offload = run_with.offload
        && !run_with.quiet_report
        && pcap.is_none()
        && report.is_none()
        && !is_stdin(path);
    let mut nothing = NoRecords;
    let writer: &mut dyn Sink = if run_with.quiet_report {
        &mut nothing
    } else {
        &mut *out
    };
    let mut until_closed = UntilClosed {
        inner: writer,
        closed: false,
    };
    let writer: &mut dyn Sink = if pcap.is_some() || report.is_some() {
        &mut until_closed
    } else {
        until_closed.inner
    };
    let mut collecting;
    let written: &mut dyn Sink = match &mut packets {
        Some(set) => {
            collecting = PacketCollector::new(writer, set);
            &mut collecting
        }
        None => writer,
    };
    let mut reporting;
    let written: &mut dyn Sink = match &mut report_data {
        Some(data) => {
            reporting = ReportCollector::new(written, data);
            &mut reporting
        }
        None => written,
    };
    let mut pairing = PairSink::new(written, pair);
    let mut filtering = FilterSink::new(&mut pairing, filter.clone())
        .with_relevant_anomalies(run_with.anomalies == AnomalyLevel::Relevant);
    let mut filtered = MessageGate::new(&mut filtering, run_with.shown.clone())
        .with_anomalies(run_with.anomalies, run_with.about.clone());
    let result = if offload {
        // What is in flight between the threads: a quarter of the capture's budget at most,
        // beside it. The writer's error there is what stopped the run.
        let in_flight = (config.memory.limit() / 4).min(IN_FLIGHT);
        let (result, written) = offloaded(&mut filtered, in_flight, |offload| {
            run(input, config, offload)
        });
        written.map_err(Error::Write).and(result)
    } else {
        run(input, config, &mut filtered)
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    drop(filtered);
    let kept = filtering.kept();
    let stuck_kept = filtering.stuck_kept();
    let refused_kept = filtering.refused_kept();
    let backwards = filtering.window_backwards();
    let ids_seen = filtering.ids_seen().to_vec();
    drop(filtering);
    if result.is_ok() {
        pairing.finish()?;
    }
    let _ = pairing;
    if !until_closed.closed {
        let mut end = || {
            if let (Ok(counts), Some(StatsFormat::Json)) = (&result, stats) {
                out.write_stats(&stats::record(counts))?;
            }
            out.end_capture()
        };
        match end() {
            // The reader went after the last record (the files beside them are still made).
            Err(e)
                if e.kind() == io::ErrorKind::BrokenPipe
                    && (pcap.is_some() || report.is_some()) => {}
            r => r?,
        }
    }
    let shown = if is_stdin(path) {
        "standard input".to_string()
    } else {
        name.to_string()
    };
    match result {
        Ok(counts) => {
            let mut text = String::new();
            if config.transactions && !filter.is_active() && counts.transactions == 0 {
                // Transaction messages read (not InitProducerId: an idempotent producer's has
                // no transactional id; WriteTxnMarkers: each decoded one tells a transaction)
                // but none told a transaction: a snapshot length that cut them before their
                // producer ids says so, with the fix.
                let txn_read: u64 = counts
                    .frames
                    .requests
                    .iter()
                    .filter(|(k, _)| matches!(**k, 24..=28))
                    .map(|(_, n)| n)
                    .sum();
                let refused = counts
                    .anomalies_by_kind
                    .get("refused_request")
                    .copied()
                    .unwrap_or(0);
                let why = if refused > 0 {
                    format!(
                        "no transaction found: {refused} request{} refused for good began none \
                         (the refused_request verdicts say which);",
                        if refused == 1 { "" } else { "s" }
                    )
                } else if txn_read > 0 && counts.cut_packets > 0 {
                    format!(
                        "no transaction found: the snapshot length ({} bytes) cut the \
                         transaction messages before their producer ids (capture with \
                         `tcpdump -s 0`; --all-apis shows what each kept);",
                        counts.snapshot_length
                    )
                } else if txn_read > 0 {
                    "no transaction found (its transaction messages could not be decoded: the \
                     anomalies say why);"
                        .to_string()
                } else if let Some(n) = counts.frames.requests.get(&22) {
                    format!(
                        "no transaction found: {n} InitProducerId request{} (of transactional or \
                         idempotent producers) but no transaction begun (no AddPartitionsToTxn, \
                         transactional Produce batch, EndTxn or marker);",
                        if *n == 1 { "" } else { "s" }
                    )
                } else {
                    "no transaction found (no transactional message of the capture);".to_string()
                };
                text.push_str(
                    &nothing_of_apis(&shown, &[], &counts).replace("no message of ;", &why),
                );
            }
            if !filter.is_active()
                && !config.all_apis
                && config.apis.is_empty()
                && counts.messages == 0
            {
                // An empty output should say whether Kafka was there at all.
                text.push_str(&nothing_found(&shown, &counts));
            }
            if !filter.is_active()
                && !config.all_apis
                && !config.apis.is_empty()
                && !config.transactions
                && counts.messages == 0
            {
                text.push_str(&nothing_of_apis(&shown, &config.apis, &counts));
            }
            if filter.is_active() && kept == 0 {
                // Say so, or an empty output looks like a failure.
                let plural =
                    |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                let (what, read) = if config.transactions {
                    ("transaction", plural(counts.transactions, "transaction"))
                } else if config.all_apis || !config.apis.is_empty() {
                    ("message", plural(counts.messages, "Kafka message"))
                } else {
                    let wtm = counts.write_txn_markers_messages();
                    ("message", plural(wtm, "WriteTxnMarkers message"))
                };
                // A topic of WriteTxnMarkers alone: the partitions a coordinator leads get
                // their markers with no message, so the transaction view may still show them.
                // (Only for --topic alone, on WriteTxnMarkers that were read.)
                let topic_alone = Filter {
                    topics: Vec::new(),
                    ..filter.clone()
                };
                let hint = if !filter.topics.is_empty()
                    && !topic_alone.is_active()
                    && !config.transactions
                    && !config.all_apis
                    && config.apis.is_empty()
                    && counts.write_txn_markers_messages() > 0
                {
                    "; if the topic's partitions are led by the transactions' coordinator, their \
                     markers need no message: --transactions --topic NAME shows the transactions \
                     that wrote to it"
                } else {
                    ""
                };
                let ids = if ids_seen.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; transactional ids read: {}{} (matched exactly, case included{})",
                        ids_seen.join(", "),
                        if ids_seen.len() == kafka_pcap::output::filter::MAX_IDS_SEEN {
                            ", ..."
                        } else {
                            ""
                        },
                        if filter.transactional_ids.iter().any(|t| t.contains(',')) {
                            "; a comma is part of an id: repeat --transactional-id for each"
                        } else {
                            ""
                        }
                    )
                };
                let stuck = match stuck_kept {
                    0 => String::new(),
                    n => format!(
                        "; {n} lso_stuck verdict{} written: a read_committed consumer stuck \
                         behind a transaction the filters left out",
                        if n == 1 { "" } else { "s" }
                    ),
                };
                let stuck = match refused_kept {
                    0 => stuck,
                    n => format!(
                        "{stuck}; {n} refused_request verdict{} written: a request refused for \
                         good, of no transaction the filters kept",
                        if n == 1 { "" } else { "s" }
                    ),
                };
                let backwards = if backwards {
                    // (Only a time of day or an offset against the other kinds can be: an
                    // --until time of day is the first after --since.)
                    if matches!(filter.since, Some(TimeBound::TimeOfDay(_))) {
                        "; --since falls after --until for this capture (a time of day is the \
                         one nearest its first packet)"
                    } else {
                        "; --since falls after --until for this capture (an offset counts from \
                         its first packet)"
                    }
                } else {
                    ""
                };
                // A time window that missed: where the capture's packets lie.
                let span = match (
                    &filter.since,
                    &filter.until,
                    counts.first_ts,
                    counts.last_ts,
                ) {
                    (None, None, ..) => String::new(),
                    (_, _, Some(first), Some(last)) => format!(
                        "; the capture's packets run from {} to {}",
                        first.to_rfc3339(),
                        last.to_rfc3339()
                    ),
                    _ => String::new(),
                };
                // Looking for hanging ones: those whose hanging could not be judged.
                let unjudged = if config.transactions
                    && (filter.errors || filter.outcomes.iter().any(|o| o == "hanging"))
                    && counts.transactions_unjudged_partitions > 0
                {
                    format!(
                        "; whether {} hang{} not judged (no Metadata named the leader, or no \
                         WriteTxnMarkers from the coordinator in the capture: --stats says which)",
                        plural(counts.transactions_unjudged_partitions, "partition"),
                        if counts.transactions_unjudged_partitions == 1 {
                            "s was"
                        } else {
                            " was"
                        }
                    )
                } else {
                    String::new()
                };
                text.push_str(&format!(
                    "kafka-pcap: {shown}: no {what} matched the filters ({read} read){unjudged}{hint}{ids}{stuck}{backwards}{span}\n"
                ));
            }
            if let (Some(data), Some(report)) = (&mut report_data, report) {
                data.filtered_by = filter.described();
                data.anomaly_level = Some(run_with.anomalies);
                data.quiet = run_with.quiet_report;
                match write_report(data, &shown, &counts, report) {
                    Ok(line) => text.push_str(&line),
                    Err(line) => return Ok(Outcome::Failed(line)),
                }
            }
            if let (Some(set), Some(pcap)) = (&packets, pcap.take()) {
                match write_pcap(path, set, pcap, set.records()) {
                    Ok(line) => text.push_str(&line),
                    Err(line) => return Ok(Outcome::Failed(line)),
                }
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
/// A TCP stream index: 0, 1, 2, ... as the records' `stream` and Wireshark's `tcp.stream`.
fn parse_stream(text: &str) -> Result<u64, String> {
    text.trim().parse().map_err(|_| {
        format!(
            "`{text}` is not a TCP stream index: a number from 0, as the records' `stream` (and \
             Wireshark's tcp.stream) give it"
        )
    })
}

/// A producer id in decimal (`1000`, `-1`) or hex (`0x3e8`, as logs and kafka-transactions.sh
/// tooling sometimes print them).
fn parse_id(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) if hex.starts_with(['+', '-']) => Err("a sign after 0x".to_string()),
        Some(hex) => i64::from_str_radix(hex, 16).map_err(|e| e.to_string()),
        None => t.parse::<i64>().map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| format!("`{text}` is not a producer id in decimal or 0x hex: {e}"))
}

/// `--host IP[:PORT]`: an address, with a port or not (`10.0.0.5`, `10.0.0.5:9092`, `::1`,
/// `[::1]:9092`).
fn parse_host(text: &str) -> Result<(std::net::IpAddr, Option<u16>), String> {
    if let Ok(ip) = text.parse::<std::net::IpAddr>() {
        return Ok((ip, None));
    }
    match text.parse::<std::net::SocketAddr>() {
        Ok(a) => Ok((a.ip(), Some(a.port()))),
        Err(_) => Err(format!(
            "{text:?} is not IP or IP:PORT (e.g. 10.0.0.5, 10.0.0.5:9092, ::1, [::1]:9092)"
        )),
    }
}

/// `--api NAME|KEY`: the key of an API Kafka defines, or a message listing what is.
fn parse_api(text: &str) -> Result<i16, String> {
    match kafka_pcap::kafka::api::api_by_name_or_key(text) {
        Some(a) => Ok(a.key),
        None => Err(format!(
            "no Kafka API is called or numbered {text:?} (names as Kafka spells them, e.g. \
             EndTxn, WriteTxnMarkers, Produce, or keys 0-{})",
            kafka_pcap::kafka::api::MAX_API_KEY
        )),
    }
}

/// Why `--api` gave nothing: which APIs were asked for, and which requests were read.
fn nothing_of_apis(shown: &str, apis: &[i16], counts: &Stats) -> String {
    let asked: Vec<&str> = apis
        .iter()
        .map(|k| api_name(*k).unwrap_or("unknown"))
        .collect();
    let read: Vec<String> = counts
        .frames
        .requests
        .iter()
        .map(|(k, n)| format!("{}:{n}", api_name(*k).unwrap_or("unknown")))
        .collect();
    let read = if read.is_empty() {
        "none".to_string()
    } else {
        read.join(" ")
    };
    format!(
        "kafka-pcap: {shown}: no message of {}; Kafka requests read: {read}\n",
        asked.join(", ")
    )
}

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
             read: {} (--all-apis lists them{})\n",
            apis.join(" "),
            if [22, 24, 25, 26, 28]
                .iter()
                .any(|k| counts.frames.requests.contains_key(k))
            {
                "; --transactions tells what happened to each transaction"
            } else {
                ""
            }
        )
    } else if counts.anomalies
        == counts
            .anomalies_by_kind
            .get("bad_timestamp")
            .copied()
            .unwrap_or(0)
    {
        if counts.packets == 0 {
            return format!("kafka-pcap: {shown}: no packet read\n");
        }
        if counts.streams == 0 {
            return format!(
                "kafka-pcap: {shown}: no TCP stream in {} (UDP, ICMP or other traffic only; \
                 or traffic inside a tunnel this tool does not unwrap, or VXLAN on a port other \
                 than 4789 and 8472: name it with --vxlan-port)\n",
                if counts.packets == 1 {
                    "1 packet".to_string()
                } else {
                    format!("{} packets", counts.packets)
                }
            );
        }
        let streams = match counts.streams {
            1 => "1 TCP stream".to_string(),
            n => format!("{n} TCP streams"),
        };
        // A small snapshot length leaves too few bytes of a request to recognise it by.
        let cut = match counts.cut_packets {
            0 => String::new(),
            n => format!(
                "; the capture's snapshot length cut {n} of its {} packets, which may leave too \
                 few bytes of each request to recognise: name the broker port with --port to \
                 decode what was kept, and capture with `tcpdump -s 0`",
                counts.packets
            ),
        };
        format!(
            "kafka-pcap: {shown}: no Kafka traffic recognised in {streams} (a broker on a port \
             other than 9092 is found from its requests' first bytes; name it with --port if \
             not{cut})\n"
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
        if interrupted().is_some() {
            return Ok(0); // finish as at the end of the input
        }
        let n = self.inner.read(buf)?;
        if let Some(b) = &self.bar {
            b.inc(n as u64);
        }
        Ok(n)
    }
}

/// The signal (SIGINT 2, SIGTERM 15) that asked the run to stop, 0 for none: set by the
/// handlers [`watch_signals`] installs while standard input is among the inputs.
static SIGNAL: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicUsize>> =
    std::sync::OnceLock::new();

/// Installs the SIGINT and SIGTERM handlers (signal-hook): a signal then ends the reading as
/// the end of the input would (what is pending is reported, `--stats` written, a JSON array
/// closed), and the program exits 128 + the signal (130, 143).
fn watch_signals() {
    let flag = SIGNAL.get_or_init(Default::default);
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Without the handler a signal ends the program as it always did.
        let _ = signal_hook::flag::register_usize(sig, flag.clone(), sig as usize);
    }
}

/// The signal that asked the run to stop, if any.
fn interrupted() -> Option<u8> {
    let n = SIGNAL.get()?.load(std::sync::atomic::Ordering::Relaxed);
    u8::try_from(n).ok().filter(|n| *n != 0)
}

/// Standard input read on a thread of its own, in chunks of 64 KiB (at most 16 waiting), so
/// that a signal is noticed while the pipe is open and silent: a blocked read(2) is not
/// interrupted (the handlers restart it), this reader's wait is.
struct Interruptible {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    buf: Vec<u8>,
    at: usize,
}

impl Interruptible {
    fn stdin() -> Self {
        let (tx, chunks) = std::sync::mpsc::sync_channel(16);
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut chunk = vec![0; 1 << 16];
                match io::Read::read(&mut stdin, &mut chunk) {
                    Ok(n) => {
                        chunk.truncate(n);
                        if tx.send(Ok(chunk)).is_err() || n == 0 {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Interruptible {
            chunks,
            buf: Vec::new(),
            at: 0,
        }
    }
}

impl io::Read for Interruptible {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.buf.len() {
            if interrupted().is_some() {
                return Ok(0);
            }
            match self
                .chunks
                .recv_timeout(std::time::Duration::from_millis(50))
            {
                Ok(Ok(chunk)) if chunk.is_empty() => return Ok(0),
                Ok(Ok(chunk)) => {
                    self.buf = chunk;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
            }
        }
        let n = buf.len().min(self.buf.len() - self.at);
        buf[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The machine's cores (1 when it cannot be told).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
/// What a worker of [`run_parallel`] hands back: how the input went, and the temporary file
/// holding its output, or `None` when it went straight to standard output.
type Finished = (Result<Outcome, io::Error>, Option<Spill>);

/// Exit status after an output error: a closed pipe (`| head`) is success.
fn output_failed(e: io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    say(&format!("kafka-pcap: writing output: {e}\n"));
    ExitCode::from(2)
}

/// Writes `text` to standard error, characters that would hide or turn text on a terminal
/// escaped (a file named with U+202E). A standard error that cannot be written
/// (`2>/dev/full`) loses the text but never stops the run (`eprint!` would panic).
fn say(text: &str) {
    let text = kafka_pcap::output::text::terminal_safe(text);
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
        Err(e) if e.kind() == ErrorKind::MissingRequiredArgument && !io::stdin().is_terminal() => {
            // `kafka-pcap < broker.pcap`: standard input is read when named.
            let _ = e.print();
            say(
                "kafka-pcap: to read the capture on standard input, give - as the capture: \
                 kafka-pcap [OPTIONS] - < FILE\n",
            );
            Err(ExitCode::from(2))
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
    let mut cli = match parse_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if cli.report.is_some() {
        cli.transactions = true;
    }
    if !cli.transactions && (!cli.transactional_ids.is_empty() || !cli.outcomes.is_empty()) {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--transactional-id and --outcome choose transactions: add --transactions (or \
                 --report)",
            )
            .exit();
    }
    if let (Some(a), Some(b)) = (&cli.report, &cli.write_pcap) {
        if a == b || same_file(a, b) {
            say("kafka-pcap: --report and --write-pcap name the same file\n");
            return ExitCode::from(2);
        }
    }
    if let Some(what) = cli.generate {
        return match generate(what) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => output_failed(e),
        };
    }
    // Options that do not go together, or would do nothing with the others given: said
    // before anything is read, with what would work.
    let conflict = |line: &str| -> ! {
        use clap::CommandFactory;
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, line)
            .exit()
    };
    if cli.hex && cli.format != Format::Tree {
        conflict("-x (hex dump) goes with --format tree: kafka-pcap --format tree -x <CAPTURE>");
    }
    if (cli.transactions || cli.report.is_some()) && !cli.all_apis && cli.apis.is_empty() {
        // (--report implies --transactions.)
        if cli.pair {
            conflict(
                "--pair pairs message records, which --transactions (and --report) leave out: \
                 add --api NAME or --all-apis (kafka-pcap --transactions --all-apis --pair \
                 <CAPTURE>)",
            );
        }
        if !cli.streams.is_empty() {
            conflict(
                "--stream chooses message records, which --transactions (and --report) leave \
                 out; a transaction spans connections: choose transactions with --host, \
                 --transactional-id or --producer-id, or add --api NAME or --all-apis for the \
                 stream's messages",
            );
        }
        if cli.hex {
            conflict(
                "-x dumps the frames of message records, which --transactions (and --report) \
                 leave out: add --api NAME or --all-apis (kafka-pcap --transactions --api \
                 EndTxn --format tree -x <CAPTURE>)",
            );
        }
    }
    let backwards = match (&cli.since, &cli.until) {
        (Some(TimeBound::At(a)), Some(TimeBound::At(b))) => a > b,
        (Some(TimeBound::AfterStart(a)), Some(TimeBound::AfterStart(b))) => a > b,
        _ => false,
    };
    if backwards {
        conflict("--since is after --until: no record could match; swap them");
    }
    // `--stats json` reads `json` as a capture: said now, not after the other captures. (From
    // the words as given: `--stats=text json` or `json --stats` mean something else.)
    let words: Vec<std::ffi::OsString> = std::env::args_os().collect();
    for w in words.windows(2) {
        let Some(value) = w[1].to_str() else { continue };
        let format = value.to_ascii_lowercase();
        if w[0] == "--stats" && (format == "json" || format == "text") && !Path::new(value).exists()
        {
            conflict(&format!(
                "`--stats {value}` reads `{value}` as a capture, and there is no such file: give \
                 the format with `=`: --stats={format}"
            ));
        }
    }
    if cli.captures.iter().filter(|p| is_stdin(p)).count() > 1 {
        conflict("standard input (-) can be read only once; give it once");
    }
    // The files written beside the records are created before anything is read.
    let opened = (|| -> Result<_, String> {
        let pcap = cli
            .write_pcap
            .as_ref()
            .map(|o| pcap_output(&cli.captures, o));
        // What else goes to standard output, if anything.
        let stdout_taken = if !cli.quiet {
            Some(
                "where the records go; name a file (or add --quiet, so that only the page goes \
                 there)",
            )
        } else if cli.stats == Some(StatsFormat::Json) {
            Some(
                "where --stats=json writes its summary; name a file (or have the summary as \
                 text on standard error: --stats)",
            )
        } else {
            None
        };
        let report = cli
            .report
            .as_ref()
            .map(|o| report_output(&cli.captures, o, stdout_taken));
        Ok((pcap.transpose()?, report.transpose()?))
    })();
    let (mut pcap, mut report_file) = match opened {
        Ok(files) => files,
        Err(line) => {
            say(&format!("{line}\n"));
            return ExitCode::from(2);
        }
    };
    let mut run_with = Run::of(&cli);
    if cli.captures.iter().any(|p| is_stdin(p)) {
        watch_signals();
    }
    let jobs = cli.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    // A capture read one at a time is read ahead on a second core when the machine has one
    // (-j 1 asks for one core: no second thread).
    run_with.config.read_ahead = cli.jobs != Some(1) && cores() >= 2;
    // Where every Produce and Fetch message's body is written (most of a capture's
    // messages), its writing (the JSON) is as much work as its decoding: it moves to a second
    // core (BENCHMARKS.md: 0.27 s against 0.34 s for --all-apis on the busy capture). Not for
    // the few records of the other APIs.
    run_with.offload =
        run_with.config.read_ahead && (cli.all_apis || cli.apis.iter().any(|k| matches!(k, 0 | 1)));
    if cli.captures.len() > 1 && jobs > 1 {
        let status = run_parallel(&cli.captures, &run_with, jobs);
        return match interrupted() {
            Some(sig) => ExitCode::from(128 + sig),
            None => status,
        };
    }
    if cli.all_apis && !cli.apis.is_empty() {
        // (From a README-only trial: `--all-apis --api InitProducerId` printed every API
        // without a word.)
        say("kafka-pcap: note: --all-apis writes every API; --api narrows nothing beside it\n");
    }
    let several = cli.captures.len() > 1;
    let stdout = io::stdout();
    let mut out = run_with.writer(BufWriter::with_capacity(1 << 16, stdout));
    let mut status = ExitCode::SUCCESS;
    for path in &cli.captures {
        out.set_capture(several.then(|| capture_name(path)));
        out.set_line_buffered(is_stdin(path));
        let progress = !cli.quiet && io::stderr().is_terminal();
        let outcome = run_one(
            path,
            &run_with,
            progress,
            &mut out,
            Outputs {
                pcap: pcap.take(),
                report: report_file.take(),
            },
        );
        // Records first, then what standard error says about them.
        if let Err(e) = out.flush() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                // Standard output's reader has gone (`| head`): what standard error says
                // (where --report and --write-pcap went) is still said; the next inputs are
                // not read.
                return match report(outcome, &mut status) {
                    Err(code) => code,
                    Ok(()) => status,
                };
            }
            return output_failed(e);
        }
        if let Err(code) = report(outcome, &mut status) {
            return code;
        }
        // Keep output flowing when reading a live pipe or several files.
        if let Err(e) = out.flush() {
            return output_failed(e);
        }
        if interrupted().is_some() {
            break; // the inputs after it are not read
        }
    }
    match interrupted() {
        Some(sig) => ExitCode::from(128 + sig),
        None => status,
    }
}

/// An input's output, written to a temporary file while other inputs are read. The file is
/// removed from its directory as soon as it is created (where the system allows), so that
/// nothing is left behind however the program ends.
struct Spill {
    file: std::fs::File,
    /// The path, where the file could not be removed while open (removed when dropped).
    path: Option<PathBuf>,
}

impl Spill {
    /// A new empty temporary file for input `i` of this process, in `TMPDIR`.
    fn create(i: usize) -> io::Result<Spill> {
        let path = std::env::temp_dir().join(format!(
            "kafka-pcap-{}-{i}-{}.out",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let path = std::fs::remove_file(&path).is_err().then_some(path);
        Ok(Spill { file, path })
    }

    /// Copies what was written to `out`.
    fn copy_to(&self, out: &mut impl Write) -> io::Result<()> {
        use std::io::Seek;
        let mut f = &self.file;
        f.seek(io::SeekFrom::Start(0))?;
        io::copy(&mut f, out)?;
        out.flush()
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Whose turn it is to be written in [`run_parallel`]: the number of inputs written so far,
/// and whether the run stopped (an output error), for workers waiting for their turn.
struct Turn {
    head: std::sync::Mutex<(usize, bool)>,
    moved: std::sync::Condvar,
}

impl Turn {
    fn state(&self) -> std::sync::MutexGuard<'_, (usize, bool)> {
        self.head.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether input `i` is the head now.
    fn is_head(&self, i: usize) -> bool {
        self.state().0 == i
    }

    /// Waits until input `i` is the head; false when the run stopped instead.
    fn wait_for(&self, i: usize) -> bool {
        let mut g = self.state();
        while g.0 != i && !g.1 {
            g = self.moved.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        !g.1
    }

    fn set(&self, head: usize) {
        self.state().0 = head;
        self.moved.notify_all();
    }

    fn stop(&self) {
        self.state().1 = true;
        self.moved.notify_all();
    }
}

/// Reads input `name` with `run_with` straight to standard output (whose turn it must be).
fn run_to_stdout(name: &Path, run_with: &Run) -> Result<Outcome, io::Error> {
    let stdout = io::stdout();
    let mut out = run_with.writer(BufWriter::with_capacity(1 << 16, stdout));
    out.set_capture(Some(capture_name(name)));
    let outcome = run_one(name, run_with, false, &mut out, Outputs::default());
    let flushed = match out {
        Writer::Ndjson(w) => w.into_inner().and_then(|mut f| f.flush()),
        Writer::Text(w) => w.into_inner().flush(),
    };
    match (outcome, flushed) {
        (Ok(o), Ok(())) => Ok(o),
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
    }
}

/// Reads input `name` into a new temporary file; the error is the file's.
fn run_to_spill(i: usize, name: &Path, run_with: &Run) -> io::Result<(Outcome, Spill)> {
    let spill = Spill::create(i)?;
    let outcome = {
        let mut out = run_with.writer(BufWriter::with_capacity(1 << 16, &spill.file));
        out.set_capture(Some(capture_name(name)));
        let outcome = run_one(name, run_with, false, &mut out, Outputs::default());
        let flushed = match out {
            Writer::Ndjson(w) => w.into_inner().and_then(|mut f| f.flush()),
            Writer::Text(w) => w.into_inner().flush(),
        };
        flushed.and(outcome)
    }?;
    Ok((outcome, spill))
}

/// Reads several inputs on `jobs` threads. An input started when every input before it is
/// written (the head of the output order) streams its records straight to standard output;
/// any other writes them to a temporary file (in `TMPDIR`), copied whole to standard output as
/// soon as every input before it is written. When the temporary file cannot be written, the
/// input waits for its turn and is read again straight to standard output (so no output is
/// lost; an input read from standard input cannot be read again). Standard error lines follow
/// the same order. Memory stays that of the runs themselves, whatever the output's size.
fn run_parallel(names: &[PathBuf], run_with: &Run, jobs: usize) -> ExitCode {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    // Each capture read at once gets its share of the budget, so that what one gives up does
    // not depend on how the others are timed.
    let threads = jobs.min(names.len()).max(1);
    let limit = run_with.config.memory.limit();
    // Each capture read ahead on a core of its own when the machine's cores allow two per
    // capture (not -j: more captures at once than cores is no reason for more threads).
    let ahead = cores() >= 2 * threads;
    let next = AtomicUsize::new(0);
    let warned = std::sync::atomic::AtomicBool::new(false);
    let turn = Turn {
        head: std::sync::Mutex::new((0, false)),
        moved: std::sync::Condvar::new(),
    };
    let (tx, rx) = mpsc::channel::<(usize, Finished)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, turn, warned) = (&next, &turn, &warned);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(name) = names.get(i) else { break };
                let mut mine = run_with.clone();
                mine.config.memory = kafka_pcap::memory::Memory::share_of(limit, threads);
                mine.config.read_ahead = ahead;
                mine.offload = false;
                let finished = if turn.is_head(i) {
                    // Nothing else is written to standard output until this input is handed
                    // back.
                    (run_to_stdout(name, &mine), None)
                } else {
                    match run_to_spill(i, name, &mine) {
                        Ok((outcome, spill)) => (Ok(outcome), Some(spill)),
                        Err(e) => {
                            if !turn.wait_for(i) {
                                break;
                            }
                            if !warned.swap(true, Ordering::Relaxed) {
                                say(&format!(
                                    "kafka-pcap: a temporary file could not be written ({e}); \
                                     captures read ahead of their turn are read again when it \
                                     comes (set TMPDIR to a writable directory to read them at \
                                     once)\n"
                                ));
                            }
                            (run_to_stdout(name, &mine), None)
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
        let stop = |code: ExitCode| {
            // Stop the workers from starting more inputs, and those waiting for their turn.
            next.store(names.len(), Ordering::Relaxed);
            turn.stop();
            code
        };
        for (i, finished) in rx {
            done[i] = Some(finished);
            while let Some(Some((outcome, spill))) = done.get_mut(printed).map(Option::take) {
                printed += 1;
                if let Some(spill) = spill {
                    if let Err(e) = spill.copy_to(&mut io::stdout().lock()) {
                        return stop(output_failed(e));
                    }
                }
                if let Err(code) = report(outcome, &mut status) {
                    return stop(code);
                }
                turn.set(printed);
            }
        }
        status
    })
}
