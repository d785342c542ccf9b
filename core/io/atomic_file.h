#pragma once
// Crash-safe file replacement: the new content goes to a uniquely named temporary file in
// the target's directory, which is flushed and fsync()ed, renamed over the target, and the
// directory is fsync()ed so that the rename itself survives a power cut. Readers therefore
// see either the old file or the complete new one, never a torn mix.
//
// On any failure the temporary file is removed, the target is left exactly as it was, and
// an IoError naming the target path, the step that failed and the system's message (errno)
// is thrown. An exception thrown by the `write` callback is propagated unchanged (after the
// temporary file is removed). The one failure after which the new content is already in
// place is the final directory sync (the message says "written, but ...").
//
// POSIX only (open/fsync/rename); the temporary is ".<name>.tmp-<pid>-<n>-<random>". A save
// killed mid-write leaves its temporary behind (the target itself is intact); the next
// successful save of the same file removes the temporaries whose process no longer runs.
//
// Notes: the new file gets the permissions of the file it replaces, or 0666 & ~umask when
// it is new. A symbolic link at `path` is replaced by the regular file, not followed.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace plexus::io {

// Streams the content through `write`. The stream is buffered and unformatted-safe (binary);
// a failed write on it makes the whole call fail with IoError.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// Same, for content already in memory.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// Fault injection for the tests of what a failed save leaves behind (tests/test_faults.cpp):
// the next time `step` runs in any atomic write, it fails with `error` (an errno value) as
// though the system had returned it — a full disk while writing, a read-only directory at
// create, an I/O error at fsync. One-shot; a no-op in normal use.
// Append: a line added to a log that grows in place (a run's metrics.jsonl, session/run_log.h).
enum class WriteStep { Create, Write, Fsync, Rename, Append };
void fail_next_write_step(WriteStep step, int error);
// The errno fail_next_write_step set for `step`, taken (0 when none): how writers other than
// the atomic ones (a log's appends) fail alike in the tests.
int take_injected_failure(WriteStep step);

}  // namespace plexus::io
