// Candidate bindings 3 and 4: the same get/set in C++, built with nanobind (NB=1) or pybind11 (NB=0).
#include <shmemcache/shmemcache.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#if NB
#include <nanobind/nanobind.h>
namespace py = nanobind;
#define MODULE(name, m) NB_MODULE(name, m)
using bytes_t = nanobind::bytes;
static const char *data_of(const bytes_t &b) { return b.c_str(); }
static size_t size_of(const bytes_t &b) { return b.size(); }
static py::object make_bytes(const char *p, size_t n) { return bytes_t(p, n); }
#else
#include <pybind11/pybind11.h>
namespace py = pybind11;
#define MODULE(name, m) PYBIND11_MODULE(name, m)
using bytes_t = pybind11::bytes;
static const char *data_of(const bytes_t &b) { return PyBytes_AS_STRING(b.ptr()); }
static size_t size_of(const bytes_t &b) { return (size_t)PyBytes_GET_SIZE(b.ptr()); }
static py::object make_bytes(const char *p, size_t n) { return bytes_t(p, n); }
#endif

struct Cache {
  shmemcache_t *h;
  std::vector<char> buf;
  Cache(uintptr_t address, size_t max_value_len) : h(reinterpret_cast<shmemcache_t *>(address)), buf(max_value_len) {}
  py::object get(const bytes_t &key) {
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(h, data_of(key), size_of(key), buf.data(), buf.size(), &len);
    if (s == SHMEMCACHE_OK) return make_bytes(buf.data(), len);
    if (s == SHMEMCACHE_NOT_FOUND) return py::none();
    throw std::runtime_error(shmemcache_strerror(s));
  }
  void set(const bytes_t &key, const bytes_t &value) {
    shmemcache_status_t s = shmemcache_set(h, data_of(key), size_of(key), data_of(value), size_of(value));
    if (s != SHMEMCACHE_OK) throw std::runtime_error(shmemcache_strerror(s));
  }
};

MODULE(MODNAME, m) {
  py::class_<Cache>(m, "Cache")
      .def(py::init<uintptr_t, size_t>())
      .def("get", &Cache::get)
      .def("set", &Cache::set);
}
