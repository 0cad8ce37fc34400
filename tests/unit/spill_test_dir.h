// A fresh temporary directory for one SSD tier test, removed with everything in it at the end.
#ifndef SHMEMCACHE_TESTS_UNIT_SPILL_TEST_DIR_H_
#define SHMEMCACHE_TESTS_UNIT_SPILL_TEST_DIR_H_

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace smc {

class SpillTestDir {
 public:
  SpillTestDir() {
    char tmpl[] = "/tmp/spill_test.XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~SpillTestDir() { RemoveAll(path_); }
  SpillTestDir(const SpillTestDir&) = delete;
  SpillTestDir& operator=(const SpillTestDir&) = delete;

  const std::string& path() const { return path_; }  // empty if it could not be made
  size_t Files() const {
    size_t n = 0;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
      closedir(d);
    }
    return n;
  }

 private:
  static void RemoveAll(const std::string& dir) {
    if (dir.empty()) return;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        chmod(path.c_str(), 0700);
        struct stat st;
        if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) RemoveAll(path);
        else unlink(path.c_str());
      }
      closedir(d);
    }
    rmdir(dir.c_str());
  }

  std::string path_;
};

}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_SPILL_TEST_DIR_H_
