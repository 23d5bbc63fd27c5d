// [model] generate writes only inside the models directory and only a missing file, and the
// files an interrupted generation left are removed at the next start.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/model_file.h"
#include "modelgen/generate_hook.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

sy::ModelConfig tiny(const fs::path& path) {
  sy::modelgen::install_generate_hook();  // `generate` writes through the registered writer
  sy::ModelConfig m;
  m.path = path.string();
  m.generate = "dense-tiny";
  return m;
}

std::string error_of(const sy::ModelConfig& m, const fs::path& dir) {
  try {
    sy::engine::ensure_model_file(m, dir, "c.toml");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "ok";
}

// A pid that belonged to a process which has exited.
pid_t dead_pid() {
  const pid_t p = fork();
  if (p == 0) _exit(0);
  int st;
  waitpid(p, &st, 0);
  return p;
}

TEST(ModelFile, GeneratesOnlyInsideTheModelsDirectory) {
  const fs::path root = fresh_dir("sy-models-root");
  const fs::path models = root / "models";
  const fs::path outside = root / "elsewhere" / "m.gguf";
  EXPECT_EQ(error_of(tiny(outside), models),
            "c.toml: model.generate: " + outside.string() + " is outside the models directory " +
                models.string() + "; generate writes only there (set models_dir to change it)");
  EXPECT_FALSE(fs::exists(outside.parent_path()));  // not even the directory was made
  const fs::path sneaky = models / ".." / "elsewhere" / "m.gguf";
  EXPECT_NE(error_of(tiny(sneaky), models).find("is outside the models directory"),
            std::string::npos);
  // A link inside the models directory that leads out of it does not count as inside.
  fs::create_directories(models);
  fs::create_directories(root / "target");
  fs::create_directory_symlink(root / "target", models / "link");
  EXPECT_NE(error_of(tiny(models / "link" / "m.gguf"), models).find("outside the models"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(root / "target" / "m.gguf"));

  const fs::path inside = models / "sub" / "m.gguf";
  EXPECT_EQ(error_of(tiny(inside), models), "ok");
  EXPECT_GT(fs::file_size(inside), 0u);
  // An existing file is never rewritten, wherever it is.
  const auto before = fs::last_write_time(inside);
  EXPECT_EQ(error_of(tiny(inside), models), "ok");
  EXPECT_EQ(fs::last_write_time(inside), before);
  fs::create_directories(outside.parent_path());
  std::ofstream(outside) << "mine";
  EXPECT_EQ(error_of(tiny(outside), models), "ok");  // exists: nothing to write, no refusal
  std::ifstream in(outside);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "mine");
}

TEST(ModelFile, RemovesWhatAnInterruptedGenerationLeft) {
  const fs::path models = fresh_dir("sy-models-stale");
  const pid_t gone = dead_pid();
  const std::string stale1 = "m.gguf.tmp." + std::to_string(gone) + ".3";
  const std::string stale2 = "m.gguf.partial." + std::to_string(gone);
  const std::string stale3 =
      "m.gguf.partial." + std::to_string(gone) + ".tmp." + std::to_string(gone) + ".0";
  const std::string live = "m.gguf.tmp." + std::to_string(getppid()) + ".1";  // still running
  for (const auto& n :
       {stale1, stale2, stale3, live, std::string("notes.txt.tmp.1.2"), std::string("other.gguf")})
    std::ofstream(models / n) << "x";
  EXPECT_EQ(sy::engine::remove_stale_generation_files(models), 3u);
  EXPECT_FALSE(fs::exists(models / stale1));
  EXPECT_FALSE(fs::exists(models / stale2));
  EXPECT_FALSE(fs::exists(models / stale3));
  EXPECT_TRUE(fs::exists(models / live));
  EXPECT_TRUE(fs::exists(models / "notes.txt.tmp.1.2"));
  EXPECT_TRUE(fs::exists(models / "other.gguf"));
  // ensure_model_file sweeps the target's directory before it looks at the target.
  std::ofstream(models / stale1) << "x";
  EXPECT_EQ(error_of(tiny(models / "m.gguf"), models), "ok");
  EXPECT_FALSE(fs::exists(models / stale1));
}

}  // namespace
