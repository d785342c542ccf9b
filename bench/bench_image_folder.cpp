// bench_image_folder: training from a folder of picture files, against the same pictures
// already in memory. How fast the loader decodes, how long the trainer waits for it, and how
// much memory the process holds while the decoded-image cache is bounded.
//
//   bench_image_folder --folder DIR [--project FILE] [--cache-mb M] [--loader-threads T]
//                      [--epochs E] [--threads N] [--decode-images K] [--prefetch P] [--no-reference]
//
// Reproduce (the numbers in docs/performance.md, "Image folders"; Release build, from the
// repository root, MNIST in data/mnist):
//   cmake --build build --target make_image_folder bench_image_folder
//   build/tests/make_image_folder /tmp/bench-digits20k --per-class 2000 --source mnist:data/mnist
//   build/tests/make_image_folder /tmp/bench-digits100k --per-class 10000 --source mnist:data/mnist
//   build/bench/bench_image_folder --folder /tmp/bench-digits20k --epochs 3
//   build/bench/bench_image_folder --folder /tmp/bench-digits100k --cache-mb 100 --epochs 2 --no-reference
//   build/bench/bench_image_folder --folder /tmp/bench-digits100k --cache-mb 10 --epochs 3 --no-reference
// (28x28 gray PNGs, 10 classes; MNIST has about 6 000 of each digit, so the 100 000-picture
// folder repeats them, each repeat a file of its own.) The machine should be otherwise idle:
// every epoch line says how much CPU other processes took meanwhile (others_cpu_s).
//
// --project  the project whose graph, training settings and dataset settings are used
//            (default examples/digits_folder.plexus: a LeNet-sized model, Adam, batch 50);
//            its dataset path is replaced by --folder, its cache_mb and loader_threads by
//            --cache-mb and --loader-threads when given (defaults: the project's, i.e. cache 0 =
//            a quarter of the memory, 2 threads), its epochs by --epochs (default 2); its
//            augmentation is turned off.
// --prefetch the training loader's prefetch depth instead of the run's (to try others).
// --threads  compute threads (util/threads.h; default: one per physical core). OpenBLAS stays
//            at one thread as everywhere in the core; OPENBLAS_CORETYPE is printed when set.
//
// What it does, in this order (one process; the later parts are compared with the earlier):
//  1. Decoding: every picture of the training folder (or its first K files) through
//     ImageFolderDataset::get_batch in a DataLoader (the project's batch size, shuffled, no
//     transform, no training) with a cache of 1 byte, so every picture is read, decoded and
//     prepared; once with 1 worker and once with 2. Reported: pictures/s of each and the ratio.
//     The files are read from the page cache (make_image_folder just wrote them; an untimed
//     first pass warms it).
//  2. Training from the folder: session::make_training_run from the project (its splits: the
//     folder's, or the seeded test and validation draws), train::Trainer for E epochs with the
//     validation loader (as plexus-cli trains). Per epoch:
//       train_s   from the epoch's start to the end of its last batch (the loader's begin(),
//                 every step, every wait): the training part of the epoch
//       wait_s    EpochEnd::data_wait_seconds: the part of train_s spent waiting for batches
//       wait%     wait_s / train_s
//       eval_s    the validation pass after it (not in train_s; the epoch is train_s + eval_s)
//       samples/s training samples / train_s
//       cache     hits and misses during the epoch (training and validation lookups), entries
//                 and bytes held after it
//       VmHWM, VmRSS  of the process after the epoch (/proc/self/status): peak and current;
//                 in brackets the peak at the end of the training part, before the evaluation
//       tensor pool   the CPU caching allocator's bytes in use, cached and peak in use
//       cpu_s     this process's CPU seconds over the epoch (all threads); others_cpu_s the
//                 machine's busy CPU seconds less cpu_s (other processes); steal_s the
//                 hypervisor's
//  3. Reference (unless --no-reference): the run's training and validation pictures decoded
//     once into data::TensorDatasets (not timed), the same compiled model with the same seed,
//     optimizer, loaders (batch, shuffle, seed, standardisation; 1 worker, the default for data
//     in memory) and trainer options, trained E epochs; reported the same way, then the ratio
//     folder / memory of train_s and of train_s + eval_s per epoch. Memory is reported for it
//     too (the peak reset first where the kernel allows), but the folder's figures come first
//     and are the ones that matter.
//
// Output, one fact per line ("key: ..."), for people and for grep.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/image_cache.h"
#include "data/image_folder.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "layers/compiler.h"
#include "optim/factory.h"
#include "plexus.h"
#include "session/run.h"
#include "train/trainer.h"
#include "util/threads.h"

using namespace plexus;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Memory {
  double hwm_mb = 0, rss_mb = 0;  // MiB
};

Memory memory() {
  Memory m;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmHWM:")) m.hwm_mb = double(std::atoll(line.c_str() + 6)) / 1024.0;
    if (line.starts_with("VmRSS:")) m.rss_mb = double(std::atoll(line.c_str() + 6)) / 1024.0;
  }
  return m;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false where that is not allowed.
bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return bool(out);
}

// CPU seconds so far: this process's (user + system, all threads) and the whole machine's busy
// time (every CPU, from /proc/stat), with the time the hypervisor took away (steal). Their
// difference over an epoch is what other processes ran meanwhile: the noise of a shared machine.
struct CpuTimes {
  double self = 0, machine_busy = 0, steal = 0;
};

CpuTimes cpu_times() {
  CpuTimes t;
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) == 0)
    t.self = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  std::ifstream in("/proc/stat");
  std::string cpu;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  const double tick = double(::sysconf(_SC_CLK_TCK));
  t.machine_busy = double(user + nice + system + irq + softirq) / tick;
  t.steal = double(steal) / tick;
  return t;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Pictures/s through a DataLoader of `workers` threads over `dataset` (no transform, nothing
// done with the batches); `others_s`: the CPU seconds other processes took meanwhile.
double decode_rate(const data::Dataset& dataset, int64_t batch, int64_t workers, int64_t& pictures, double& others_s) {
  data::DataLoader loader(dataset, {.batch_size = batch, .shuffle = true, .seed = 7, .workers = workers});
  pictures = 0;
  const CpuTimes c0 = cpu_times();
  const auto t0 = Clock::now();
  for (data::Batch& b : loader) pictures += b.inputs.size(0);
  const double seconds = since(t0);
  const CpuTimes c1 = cpu_times();
  others_s = std::max(0.0, c1.machine_busy - c0.machine_busy - (c1.self - c0.self));
  return double(pictures) / seconds;
}

struct EpochFigures {
  double train_s = 0, wait_s = 0, eval_s = 0;
  double cpu_s = 0, others_s = 0, steal_s = 0;  // over train_s + eval_s
  int64_t samples = 0;
};

// Trains with `trainer` and prints one line per epoch under `label`.
std::vector<EpochFigures> train_and_report(const char* label, train::Trainer& trainer, int64_t samples_per_epoch,
                                           const data::DecodedImageCache* cache) {
  std::vector<EpochFigures> out;
  Clock::time_point epoch_start = Clock::now(), last_batch = epoch_start;
  CpuTimes cpu_start = cpu_times();
  Memory after_training;  // at the end of the epoch's last batch, before its evaluation
  int64_t hits = cache ? cache->hits() : 0, misses = cache ? cache->misses() : 0;
  trainer.set_callback([&](const train::Event& event) {
    if (const auto* b = std::get_if<train::BatchEnd>(&event)) {
      last_batch = Clock::now();
      if (b->batch == b->batches) after_training = memory();
      return;
    }
    const auto* e = std::get_if<train::EpochEnd>(&event);
    if (!e) return;
    const auto now = Clock::now();
    const CpuTimes cpu = cpu_times();
    EpochFigures f;
    f.cpu_s = cpu.self - cpu_start.self;
    f.others_s = std::max(0.0, cpu.machine_busy - cpu_start.machine_busy - f.cpu_s);
    f.steal_s = cpu.steal - cpu_start.steal;
    f.train_s = std::chrono::duration<double>(last_batch - epoch_start).count();
    f.eval_s = std::chrono::duration<double>(now - last_batch).count();
    f.wait_s = e->data_wait_seconds;
    f.samples = samples_per_epoch;
    out.push_back(f);
    const Memory m = memory();
    std::printf("epoch %s %d: train_s %.3f  wait_s %.3f  wait %.1f%%  eval_s %.3f  samples/s %.0f  val_acc %.2f%%",
                label, e->epoch, f.train_s, f.wait_s, 100.0 * f.wait_s / f.train_s, f.eval_s,
                double(f.samples) / f.train_s, 100.0 * e->eval_accuracy);
    if (cache) {
      const int64_t h = cache->hits(), mi = cache->misses();
      std::printf("  cache hits %lld misses %lld entries %lld bytes %.1f MiB", (long long)(h - hits),
                  (long long)(mi - misses), (long long)cache->entries(), double(cache->bytes()) / (1 << 20));
      hits = h;
      misses = mi;
    }
    const MemoryStats pool = memory_stats(Device::cpu());
    std::printf("  VmHWM %.1f MiB (%.1f before eval)  VmRSS %.1f MiB  tensor pool %.1f MiB in use, %.1f cached, peak "
                "%.1f  cpu_s %.2f  others_cpu_s %.2f  steal_s %.2f\n",
                m.hwm_mb, after_training.hwm_mb, m.rss_mb, double(pool.bytes_in_use) / (1 << 20),
                double(pool.bytes_cached) / (1 << 20), double(pool.peak_bytes_in_use) / (1 << 20), f.cpu_s,
                f.others_s, f.steal_s);
    std::fflush(stdout);
    cpu_start = cpu_times();
    epoch_start = Clock::now();  // the next epoch starts when this callback returns
  });
  const train::RunResult result = trainer.run();
  if (result.status != train::RunStatus::Completed) throw Error("training " + std::string(label) + ": " + result.message);
  return out;
}

// The whole split decoded once: inputs [N, C, H, W] in raw units, targets [N].
std::shared_ptr<data::TensorDataset> in_memory(const data::Dataset& split) {
  std::vector<int64_t> all(size_t(split.size()));
  std::iota(all.begin(), all.end(), int64_t(0));
  const data::Example e = split.get_batch(all);
  return std::make_shared<data::TensorDataset>(e.input, e.target);
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_image_folder --folder DIR [--project FILE] [--cache-mb M] [--loader-threads T]\n"
               "                          [--epochs E] [--threads N] [--decode-images K] [--prefetch P] [--no-reference]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string folder, project = "examples/digits_folder.plexus";
  int64_t cache_mb = -1, loader_threads = -1, epochs = 2, decode_images = 0, prefetch = -1;
  int threads = 0;
  bool reference = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-reference") {
      reference = false;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    if (a == "--folder") folder = v;
    else if (a == "--project") project = v;
    else if (a == "--cache-mb") cache_mb = std::atoll(v.c_str());
    else if (a == "--loader-threads") loader_threads = std::atoll(v.c_str());
    else if (a == "--epochs") epochs = std::atoll(v.c_str());
    else if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--decode-images") decode_images = std::atoll(v.c_str());
    else if (a == "--prefetch") prefetch = std::atoll(v.c_str());
    else return usage();
  }
  if (folder.empty() || epochs < 1 || threads < 0 || decode_images < 0) return usage();

  try {
    if (threads > 0) set_num_threads(threads);
    graph::Graph g = graph::load_project(project);
    g.dataset.path = std::filesystem::absolute(folder).lexically_normal().string();
    if (g.dataset.kind != "image_folder") throw ValueError(project + ": not an image_folder project");
    if (cache_mb >= 0) g.dataset.cache_mb = cache_mb;
    if (loader_threads > 0) g.dataset.loader_threads = loader_threads;
    // The pictures as stored, in both runs: augmentation costs the same from a folder as from
    // memory, and the in-memory reference has none.
    const graph::DatasetBinding plain;
    g.dataset.augment_shift = plain.augment_shift;
    g.dataset.augment_flip = plain.augment_flip;
    g.dataset.augment_rotation = plain.augment_rotation;
    g.dataset.augment_brightness = plain.augment_brightness;
    g.dataset.augment_contrast = plain.augment_contrast;
    g.training.epochs = epochs;
    g.training.device = "cpu";

    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("device: cpu (%d compute threads, OPENBLAS_CORETYPE=%s, %ld CPUs online)\n", num_threads(),
                coretype ? coretype : "(unset)", ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("load at start: %s\n", loadavg().c_str());
    std::printf("settings: project %s, batch %lld, cache_mb %lld%s, loader_threads %lld, epochs %lld\n",
                project.c_str(), (long long)g.training.batch_size, (long long)g.dataset.cache_mb,
                g.dataset.cache_mb == 0 ? " (a quarter of the memory)" : "", (long long)g.dataset.loader_threads,
                (long long)epochs);
    std::fflush(stdout);

    // 1. Decoding throughput, nothing kept.
    {
      const data::ImageFolderOptions options{graph::image_format(g.dataset),
                                             g.dataset.bad_files == "skip" ? data::BadFiles::Skip : data::BadFiles::Strict,
                                             1};
      const auto t0 = Clock::now();
      const data::ImageFolderScan scan = data::scan_image_folder(g.dataset.path, options);
      std::printf("scan: %zu pictures in %zu classes in %.2f s\n", scan.train.files.size() + scan.validation.files.size() +
                  scan.test.files.size(), scan.class_names.size(), since(t0));
      auto dataset = std::make_shared<data::ImageFolderDataset>(scan, scan.train, options,
                                                                std::make_shared<data::DecodedImageCache>(1));
      std::shared_ptr<const data::Dataset> decoded = dataset;
      if (decode_images > 0 && decode_images < dataset->size()) {
        std::vector<int64_t> first(static_cast<size_t>(decode_images));
        std::iota(first.begin(), first.end(), int64_t(0));
        decoded = std::make_shared<data::Subset>(dataset, std::move(first));
      }
      int64_t n = 0;
      double others = 0;
      decode_rate(*decoded, g.training.batch_size, 2, n, others);  // warms the page cache and the allocator
      const double one = decode_rate(*decoded, g.training.batch_size, 1, n, others);
      std::printf("decode workers 1: %lld pictures, %.0f pictures/s  others_cpu_s %.2f\n", (long long)n, one, others);
      const double two = decode_rate(*decoded, g.training.batch_size, 2, n, others);
      std::printf("decode workers 2: %lld pictures, %.0f pictures/s  others_cpu_s %.2f\n", (long long)n, two, others);
      std::printf("decode ratio 2/1: %.2f\n", two / one);
      std::printf("decode cache: %lld entries (capacity 1 byte: none kept)\n", (long long)dataset->cache()->entries());
      std::fflush(stdout);
    }

    // 2. Training from the folder.
    const Memory before = memory();
    std::printf("memory before the run: VmHWM %.1f MiB  VmRSS %.1f MiB\n", before.hwm_mb, before.rss_mb);
    const auto t_open = Clock::now();
    session::TrainingRun run = session::make_training_run(g);
    const std::shared_ptr<data::DecodedImageCache> cache = run.data.image_folder->cache;
    if (prefetch >= 0) {
      data::DataLoaderOptions o = run.train_loader->options();
      o.prefetch = prefetch;
      run.train_loader = std::make_unique<data::DataLoader>(run.data.train, o);
    }
    std::printf("train loader: %lld workers, prefetch %lld\n", (long long)run.train_loader->options().workers,
                (long long)run.train_loader->options().prefetch);
    std::printf("run: %lld train / %lld validation / %lld test pictures (not used), %lld parameters, %s; "
                "opened in %.2f s; cache capacity %.1f MiB\n",
                (long long)run.data.train->size(), (long long)(run.data.validation ? run.data.validation->size() : 0),
                (long long)run.data.test->size(), (long long)run.compiled.model->num_parameters(),
                session::device_text(Device::cpu()).c_str(), since(t_open), double(cache->capacity()) / (1 << 20));
    std::fflush(stdout);
    std::vector<EpochFigures> folder_epochs;
    {
      train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                             run.trainer_options);
      trainer.set_scheduler(run.scheduler.get());
      folder_epochs = train_and_report("folder", trainer, run.data.train->size(), cache.get());
    }
    const Memory peak = memory();
    std::printf("folder peak: VmHWM %.1f MiB (%.1f MB)\n", peak.hwm_mb, peak.hwm_mb * 1.048576);
    double worst = 0, wait = 0, trained = 0;
    for (const EpochFigures& f : folder_epochs) {
      worst = std::max(worst, f.wait_s / f.train_s);
      wait += f.wait_s;
      trained += f.train_s;
    }
    std::printf("folder wait: %.1f%% of the training time over all epochs, %.1f%% in the worst epoch\n",
                100 * wait / trained, 100 * worst);
    std::fflush(stdout);
    if (!reference) return 0;

    // 3. The same pictures in memory.
    const auto train_mem = in_memory(*run.data.train);
    const auto val_mem = run.data.validation ? in_memory(*run.data.validation) : nullptr;
    const bool reset = reset_peak();
    const Memory m0 = memory();
    std::printf("memory before the reference (pictures decoded): VmHWM %.1f MiB%s  VmRSS %.1f MiB\n", m0.hwm_mb,
                reset ? " (reset)" : " (could not reset)", m0.rss_mb);
    layers::CompiledGraph compiled = layers::compile(g, run.data.info, run.settings.seed);
    const auto optimizer = optim::make_optimizer(run.settings, compiled.model->parameters());
    const auto scheduler = optim::make_scheduler(run.settings, *optimizer, run.settings.epochs,
                                                   run.train_loader->size());
    data::DataLoaderOptions train_options = run.train_loader->options();
    train_options.workers = 1;
    data::DataLoader train_loader(train_mem, train_options);
    std::unique_ptr<data::DataLoader> eval_loader;
    if (val_mem) {
      data::DataLoaderOptions eval_options = run.eval_loader->options();
      eval_options.workers = 1;
      eval_loader = std::make_unique<data::DataLoader>(val_mem, eval_options);
    }
    train::Trainer trainer(*compiled.model, *optimizer, train_loader, eval_loader.get(), run.trainer_options);
    trainer.set_scheduler(scheduler.get());
    const std::vector<EpochFigures> memory_epochs = train_and_report("memory", trainer, train_mem->size(), nullptr);
    for (size_t e = 0; e < folder_epochs.size() && e < memory_epochs.size(); ++e) {
      const EpochFigures &f = folder_epochs[e], &m = memory_epochs[e];
      std::printf("ratio %zu: folder/memory train_s %.3f / %.3f = %.2f; with eval %.3f / %.3f = %.2f\n", e + 1,
                  f.train_s, m.train_s, f.train_s / m.train_s, f.train_s + f.eval_s, m.train_s + m.eval_s,
                  (f.train_s + f.eval_s) / (m.train_s + m.eval_s));
    }
    std::printf("load at end: %s\n", loadavg().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
