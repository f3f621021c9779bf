//! The splitter against `str::split` with buffers small enough that separators straddle reads,
//! and compressed inputs against the plain text.

use super::documents::{Format, Splitter};
use super::input::Input;
use std::io::{BufReader, Write};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

fn split_all(text: &str, format: &Format, capacity: usize) -> Vec<String> {
    let mut reader = BufReader::with_capacity(capacity, text.as_bytes());
    let mut s = Splitter::new(Path::new("t"), format, false);
    let mut out = Vec::new();
    loop {
        let docs = s.next_batch(&mut reader, 7).unwrap();
        if docs.is_empty() {
            return out;
        }
        out.extend(docs.strs().into_iter().map(str::to_owned));
    }
}

/// Every document of `text` read in batches of `batch` bytes through a buffer of `capacity`,
/// or the first error.
fn read_docs(
    text: &[u8],
    format: &Format,
    capacity: usize,
    batch: usize,
    lossy: bool,
) -> Result<Vec<String>, String> {
    let mut reader = BufReader::with_capacity(capacity, text);
    let mut s = Splitter::new(Path::new("t.txt"), format, lossy);
    let mut got = Vec::new();
    loop {
        let docs = s
            .next_batch(&mut reader, batch)
            .map_err(|e| e.to_string())?;
        if docs.is_empty() {
            return Ok(got);
        }
        got.extend(docs.strs().into_iter().map(str::to_owned));
    }
}

/// What the splitter promises: `split`, without an empty piece after the last boundary.
fn reference(text: &str, sep: &str) -> Vec<String> {
    let mut v: Vec<String> = text.split(sep).map(str::to_owned).collect();
    if v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

#[test]
fn separators_straddling_reads_are_found() {
    let texts = [
        "a<|sep|>bb<|sep|><|sep|>ccc<|sep|>",
        "<|sep|>x",
        "no separator at all",
        "",
        "<|sep<|sep|>|sep|>",
    ];
    for text in texts {
        for capacity in [1, 2, 3, 5, 8, 64] {
            let got = split_all(text, &Format::Separated("<|sep|>".into()), capacity);
            assert_eq!(
                got,
                reference(text, "<|sep|>"),
                "{text:?} capacity {capacity}"
            );
        }
    }
}

#[test]
fn lines_drop_only_their_endings() {
    let text = "one\r\ntwo\n\nthree\r\r\nlast";
    for capacity in [1, 4, 64] {
        assert_eq!(
            split_all(text, &Format::Lines, capacity),
            ["one", "two", "", "three\r", "last"],
        );
    }
}

#[test]
fn jsonl_takes_the_field_and_skips_the_rest() {
    let text = "{\"id\": 1, \"meta\": {\"text\": \"inner\"}, \"text\": \"caf\\u00e9 \\\"q\\\"\"}\n\n  \n{\"text\":\"b\",\"text\":\"second\"}\n";
    assert_eq!(
        split_all(text, &Format::Jsonl("text".into()), 8),
        ["café \"q\"", "second"]
    );
}

/// Records with and without escapes (read in place or unescaped), blank lines, `\r\n` endings
/// and non-ASCII text, cut into blocks of every size, against serde_json's own reading of each
/// line: the texts come out whole and in order whatever the block boundaries.
#[test]
fn jsonl_records_straddling_blocks_read_as_serde_json_reads_them() {
    let values = [
        "plain",
        "",
        "caf\u{e9} 한국",
        "tab\tand \"quotes\"",
        "line\nbreak",
        "\\",
    ];
    let mut text = String::new();
    let mut expected = Vec::new();
    for k in 0..60 {
        let v = values[k % values.len()].repeat(k % 4);
        let record = serde_json::json!({"id": k, "text": v, "z": [1, {"text": "no"}]});
        text.push_str(&record.to_string());
        text.push_str(["\n", "\r\n", "\n\n", "\n  \n"][k % 4]);
        expected.push(v);
    }
    for capacity in [1, 3, 64] {
        for batch in [1, 2, 7, 100, 1 << 20] {
            let format = Format::Jsonl("text".into());
            let got = read_docs(text.as_bytes(), &format, capacity, batch, false);
            assert_eq!(got.unwrap(), expected, "capacity {capacity} batch {batch}");
        }
    }
}

#[test]
fn jsonl_errors_name_the_record() {
    for (line, says) in [
        ("{\"id\": 1}", "no field \"text\""),
        ("{\"text\": 5}", "is a number"),
        ("{\"text\": null}", "is null"),
        ("[1, 2]", "not a JSON object"),
        ("{\"text\": \"a\"} trailing", "not a JSON object"),
    ] {
        let text = format!("{{\"text\": \"ok\"}}\n{line}\n");
        // The bad record in the first block or in a block of its own.
        for batch in [1, 5, 1 << 20] {
            let format = Format::Jsonl("text".into());
            let err = read_docs(text.as_bytes(), &format, 1 << 13, batch, false).unwrap_err();
            assert!(
                err.contains("t.txt: record 2") && err.contains(says),
                "{err}"
            );
        }
    }
}

fn read_through_input(path: &Path) -> String {
    let mut input = Input::open(path, Arc::new(AtomicU64::new(0))).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(input.reader(), &mut out).unwrap();
    let f = input.fingerprint().expect("read to the end");
    assert_eq!(f.bytes, std::fs::metadata(path).unwrap().len());
    out
}

#[test]
fn gzip_and_zstd_inputs_read_as_their_text() {
    let dir = std::env::temp_dir().join(format!("subword-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "안녕하세요 line one\nline two\n".repeat(1000);
    let plain = dir.join("a.txt");
    std::fs::write(&plain, &text).unwrap();
    let gz = dir.join("a.txt.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let zst = dir.join("a.txt.zst");
    std::fs::write(&zst, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    for p in [&plain, &gz, &zst] {
        assert_eq!(read_through_input(p), text, "{}", p.display());
    }
    let f = super::input::fingerprint_of(&plain).unwrap();
    assert_eq!(f.sha256.len(), 64);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the lines format promises: `split('\n')` without an empty piece after a final line
/// break, and each line's `\r` of a `\r\n` ending dropped.
fn reference_lines(text: &str) -> Vec<String> {
    reference(text, "\n")
        .into_iter()
        .map(|l| l.strip_suffix('\r').map_or(l.clone(), str::to_owned))
        .collect()
}

#[test]
fn lines_straddling_reads_and_batches_are_cut_as_split_does() {
    let parts = ["a", "\n", "\r\n", "\r", "é", "한국", "\n\n", "  ", "xyz"];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 40) as usize;
        let text: String = (0..len)
            .map(|k| parts[((state >> (k % 60)) as usize + k) % parts.len()])
            .collect();
        for capacity in [1, 2, 3, 7, 64] {
            for batch in [1, 5, 1 << 20] {
                let got = read_docs(text.as_bytes(), &Format::Lines, capacity, batch, false);
                assert_eq!(
                    got,
                    Ok(reference_lines(&text)),
                    "{text:?} {capacity} {batch}"
                );
            }
        }
    }
}

#[test]
fn a_bad_line_is_named_or_replaced() {
    let text = b"ok\nfine\nbad \xff here\nlast\n";
    // Batches of one line, of a few bytes, and of everything: the bad line may come in a block
    // of its own or among good ones, and its number must not depend on that.
    for capacity in [1, 4, 64] {
        for batch in [1, 3, 1 << 20] {
            let err = read_docs(text, &Format::Lines, capacity, batch, false).unwrap_err();
            assert!(err.contains("t.txt: line 3 is not UTF-8"), "{err}");
            let got = read_docs(text, &Format::Lines, capacity, batch, true);
            assert_eq!(got.unwrap(), ["ok", "fine", "bad \u{fffd} here", "last"]);
        }
    }
}

/// The values of a `.npy` file this module wrote (128-byte header, little-endian `width` bytes).
fn npy_values(path: &Path, width: usize) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    bytes[128..]
        .chunks(width)
        .map(|c| c.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64))
        .collect()
}

#[test]
fn a_job_of_many_recycled_batches_writes_every_document_in_order() {
    // Batches of a few dozen bytes, so the reader fills recycled batches many times over
    // (lines longer than a batch among them); a toy encoder: a line's ids are its bytes.
    let dir = std::env::temp_dir().join(format!("subword-files-job-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lines: Vec<String> = (0..3000)
        .map(|k| "abcdefghij".repeat(k % 13) + &k.to_string())
        .collect();
    let input = dir.join("in.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let opts = super::Options {
        format: Format::Lines,
        lossy: false,
        dtype: super::Dtype::U16,
        shard_tokens: 10_000,
        eot: Some(1),
        num_threads: 2,
        show_progress: false,
        batch_bytes: 40,
        overwrite: false,
        tokenizer: super::TokenizerInfo {
            name: "bytes".into(),
            kind: "test".into(),
            n_vocab: 256,
            sha256: None,
        },
    };
    let out = dir.join("out");
    let encode = |run: &[&str], eot: Option<u32>, ids: &mut Vec<u32>, ends: &mut Vec<usize>| {
        for doc in run {
            ids.extend(doc.bytes().map(u32::from));
            ids.extend(eot);
            ends.push(ids.len());
        }
        Ok(())
    };
    let report = super::encode_files(&[input], &out, &opts, &encode).unwrap();
    let want: Vec<u64> = lines
        .iter()
        .flat_map(|l| l.bytes().map(u64::from).chain([1]))
        .collect();
    let got: Vec<u64> = report
        .shards
        .iter()
        .flat_map(|s| npy_values(&out.join(&s.file), 2))
        .collect();
    assert!(got == want, "the stream differs");
    let mut offsets = vec![0u64];
    for l in &lines {
        offsets.push(offsets.last().unwrap() + l.len() as u64 + 1);
    }
    assert_eq!(npy_values(&out.join(super::shards::INDEX_FILE), 8), offsets);
    assert_eq!(report.documents, lines.len() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}
