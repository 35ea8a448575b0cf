// The machine's peaks as kept per environment (CACHE_DIR/peaks/ENV_ID.json): each with its measurement (value,
// error, when, how, how busy the rest of the machine was), and whether a result has beaten it since. Torch-free:
// the worker measures (fingerprint.hpp, machine_peaks), rnx bench reads what the workers kept and marks the peaks
// its results beat, so that the next worker measures them again and the higher stands.
#pragma once

#include "rnx/common/run_document.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace rnx::runner {

// One peak as measured: its rate, its measurement (run_document.hpp), the cores other processes kept busy while it
// was timed, and what beat it since (empty: nothing).
struct kept_peak {
  double value = 0;
  peak_measurement measured;
  double others_cores = 0;
  std::string beaten_by;
};

// An environment's peaks by name (rnx/common/speed_of_light.hpp names them).
using peak_set = std::map<std::string, kept_peak>;

// Other processes keeping more than this many cores busy while a peak was timed: it was measured on a busy machine
// and may be low, so a worker that finds the machine quieter than this measures it again.
inline constexpr double busy_cores = 0.25;
// A machine this many cores quieter than when a busy machine's peak was timed measures it again, quiet or not.
inline constexpr double quieter_by = 0.5;

// The file of `env_id`'s peaks under `cache_dir`.
std::filesystem::path peak_file(const std::filesystem::path& cache_dir, const std::string& env_id);

// The kept peaks of `file`; nullopt where there are none, the file is damaged, or it was written by an rnx that
// kept no measurement with its peaks (then they are measured again: a peak of unknown origin may be a busy
// machine's).
std::optional<peak_set> read_peaks(const std::filesystem::path& file);

// Writes `peaks` whole (by rename); a cache that cannot be written is left alone.
void write_peaks(const std::filesystem::path& file, const peak_set& peaks);

// Whether a kept peak must be measured again: a result beat it, or it was timed while other processes kept more
// than busy_cores busy and the machine is now quiet (at most busy_cores) or at least quieter_by cores quieter
// (`others_now`: the cores they keep busy now).
bool needs_measuring(const kept_peak& p, double others_now);

// `kept` after a new measurement `fresh`: per peak the higher of the two stands, with its own measurement; a kept
// peak the new one does not beat is confirmed (its mark of being beaten cleared, and where the new one was timed on
// a quieter machine, that quiet recorded: it is no longer a busy machine's).
peak_set keep_higher(const peak_set& kept, const peak_set& fresh);

// Marks `peak` of `env_id` as beaten by `by` ("gemm/eager/float32/b4 at 1.27 of it"), for the next worker to
// measure again; nothing where the cache holds no such peak.
void mark_beaten(const std::filesystem::path& cache_dir, const std::string& env_id, const std::string& peak,
                 const std::string& by);

// `env` with the peaks its environment keeps now where they are higher than the ones it carries (a worker that
// started after the first one measured again and raised them), with their measurements.
void take_kept_peaks(environment& env, const std::filesystem::path& cache_dir);

}  // namespace rnx::runner
