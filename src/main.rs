//! The `kafka-pcap` command: parses arguments, runs the pipeline on each capture, and maps
//! errors to exit codes (0: every input was read; 2: an input could not be opened or is not a
//! capture). A closed standard output (`| head`) ends the run quietly with 0.

use clap::Parser;
use kafka_pcap::output::NdjsonWriter;
use kafka_pcap::{run, Config, Error, DEFAULT_MAX_FRAME_SIZE};
use std::fs::File;
use std::io::{self, BufWriter};
use std::process::ExitCode;

/// Decode Kafka WriteTxnMarkers (API key 27) requests and responses from pcap/pcapng captures
/// into one JSON object per line.
#[derive(Parser, Debug)]
#[command(
    name = "kafka-pcap",
    version,
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
    captures: Vec<String>,

    /// Also treat this TCP port as a Kafka broker port (repeatable). 9092 always is; other
    /// ports are found from the bytes of each connection.
    #[arg(long = "port", value_name = "PORT")]
    ports: Vec<u16>,

    /// Largest plausible Kafka frame, in bytes; larger size prefixes are reported as
    /// `frame_too_large` and framing resynchronises.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = DEFAULT_MAX_FRAME_SIZE,
        value_parser = clap::value_parser!(u32).range(8..)
    )]
    max_frame_size: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut config = Config {
        max_frame_size: cli.max_frame_size,
        ..Config::default()
    };
    for p in &cli.ports {
        if !config.kafka_ports.contains(p) {
            config.kafka_ports.push(*p);
        }
    }
    let several = cli.captures.len() > 1;
    let stdout = io::stdout();
    let mut out = NdjsonWriter::new(BufWriter::with_capacity(1 << 16, stdout.lock()), None);
    let mut status = ExitCode::SUCCESS;
    for name in &cli.captures {
        out.set_capture(several.then(|| name.clone()));
        out.set_line_buffered(name == "-");
        let result = if name == "-" {
            run(io::stdin(), &config, &mut out)
        } else {
            match File::open(name) {
                Ok(f) => run(f, &config, &mut out),
                Err(e) => {
                    eprintln!("kafka-pcap: {name}: cannot open: {e}");
                    status = ExitCode::from(2);
                    continue;
                }
            }
        };
        match result {
            Ok(_) => {}
            Err(Error::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                return ExitCode::SUCCESS;
            }
            Err(Error::Write(e)) => {
                eprintln!("kafka-pcap: writing output: {e}");
                return ExitCode::from(2);
            }
            Err(e) => {
                let shown = if name == "-" { "standard input" } else { name };
                eprintln!("kafka-pcap: {shown}: {e}");
                status = ExitCode::from(2);
            }
        }
        // Keep output flowing when reading a live pipe or several files.
        if let Err(e) = out.flush() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("kafka-pcap: writing output: {e}");
            return ExitCode::from(2);
        }
    }
    status
}
