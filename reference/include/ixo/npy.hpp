// Minimal .npy (format 1.0/2.0/3.0) reader and writer for the dtypes case files use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ixo/error.hpp"

namespace ixo {

struct NpyArray {
  std::string descr;  // e.g. "<u2", "|u1", "<i4", "<i8", "<f4"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;  // raw little-endian bytes, C order
  std::int64_t numel() const;      // throws InputError("npy") if the product overflows int64
  int item_size() const;           // bytes per element; 0 when descr is not a plain dtype
};

// A shape for messages: "[2,3,4]".
std::string shape_string(const std::vector<std::int64_t>& shape);

// Throws InputError(field) naming `path` when it does not exist, is a dangling symlink, or is
// anything but a regular file after following symlinks (directory, FIFO, socket, device): a
// FIFO is refused before it is opened, so reading never blocks.
void require_regular_file(const std::string& path, const std::string& field);

// Throws InputError(field, "'path' ...") for missing, non-regular, truncated or malformed
// files. Every shape product is overflow-checked and the size the header claims is compared
// with the file's real size before anything is allocated.
NpyArray read_npy(const std::string& path, const std::string& field);
// Asks for transparent huge pages over the 2 MiB-aligned interior of a block of n bytes
// (blocks under 8 MiB are left alone). Only a hint, no effect on contents; call it before
// the pages are first touched. The oracle reads K rows at random slots: with 4 KiB pages
// each row also misses the TLB (about 20 % of the oracle's time at 537 MB of K).
void advise_huge_pages(void* p, std::size_t n);

// A read-only map of an .npy file's data (MAP_PRIVATE, PROT_READ): nothing is copied; the
// pages are read on first touch and shared with the page cache. The header is checked
// exactly as read_npy checks it. `data` keeps the mapping alive (null when bytes == 0).
struct NpyMap {
  std::string descr;
  std::vector<std::int64_t> shape;
  std::shared_ptr<const std::uint8_t> data;
  std::size_t bytes = 0;
};
NpyMap map_npy(const std::string& path, const std::string& field);
// The same parser over bytes in memory (`path` only names the source in messages); the
// bytes must be the whole file. Used by the fuzz target.
NpyArray parse_npy(const void* bytes, std::size_t size, const std::string& path, const std::string& field);

void write_npy(const std::string& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes);

// The elements of `a` as T (the caller has checked the dtype). Throws InputError("npy") if
// the array holds fewer bytes than its shape needs.
template <class T>
std::vector<T> npy_values(const NpyArray& a) {
  const auto n = static_cast<std::size_t>(a.numel());
  if (n > a.data.size() / sizeof(T))
    throw InputError("npy", "array of dtype '" + a.descr + "' holds " + std::to_string(a.data.size()) +
                                " bytes, fewer than its shape needs");
  std::vector<T> v(n);
  if (!v.empty()) __builtin_memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace ixo
