// Minimal .npy (format 1.0/2.0/3.0) reader and writer for the dtypes case files use.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ixo {

struct NpyArray {
  std::string descr;                 // e.g. "<u2", "|u1", "<i4", "<i8", "<f4"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;    // raw little-endian bytes, C order
  std::int64_t numel() const;
  int item_size() const;
};

// Throws InputError(field = the file name) for missing, truncated or malformed files.
NpyArray read_npy(const std::string& path, const std::string& field);
void write_npy(const std::string& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes);

template <class T>
std::vector<T> npy_values(const NpyArray& a) {
  std::vector<T> v(static_cast<std::size_t>(a.numel()));
  if (!v.empty()) __builtin_memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace ixo
