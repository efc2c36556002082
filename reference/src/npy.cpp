#include "ixo/npy.hpp"
#include "ixo/judge_mutants.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <new>
#include <optional>
#include <streambuf>

#include "ixo/checked.hpp"
#include "ixo/error.hpp"

namespace ixo {

namespace fs = std::filesystem;

std::int64_t NpyArray::numel() const { return checked_product("npy", "element count of shape", shape); }

namespace {

// Bytes per element of a plain numeric descr ("<u2", "|u1", "<f4", ...); 0 otherwise.
int descr_item_size(const std::string& d) {
  std::size_t i = 0;
  if (i < d.size() && (d[i] == '<' || d[i] == '>' || d[i] == '|' || d[i] == '=')) ++i;
  if (i >= d.size() || std::strchr("biufc", d[i]) == nullptr || d[i] == '\0') return 0;
  ++i;
  if (d.size() - i < 1 || d.size() - i > 2) return 0;
  int n = 0;
  for (; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') return 0;
    n = n * 10 + (d[i] - '0');
  }
  return n == 1 || n == 2 || n == 4 || n == 8 || n == 16 ? n : 0;
}

// Header text for messages: printable ASCII, at most 80 characters.
std::string shown(const std::string& s) {
  std::string o;
  for (const char ch : s.substr(0, 80)) {
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u < 0x7f) {
      o += ch;
    } else {
      static const char* hex = "0123456789abcdef";
      o += "\\x";
      o += hex[u >> 4];
      o += hex[u & 15];
    }
  }
  return s.size() > 80 ? o + "..." : o;
}

// The header is a Python dict literal with the keys 'descr' (a string, or a list for a
// structured dtype), 'fortran_order' (True/False) and 'shape' (a tuple of ints).
struct Header {
  std::optional<std::string> descr;      // the string's contents
  std::optional<std::string> descr_raw;  // a non-string descr (structured dtypes), as written
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::int64_t>> shape;
  std::string shape_text;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path, const std::string& field)
      : s_(text), path_(path), field_(field) {}

  Header parse() {
    Header h;
    ws();
    expect('{');
    while (true) {
      ws();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      ws();
      expect(':');
      ws();
      auto seen = [&](bool dup) {
        if (dup) fail("npy header has a duplicate '" + key + "' entry");
      };
      if (key == "descr") {
        seen(h.descr.has_value() || h.descr_raw.has_value());
        if (peek() == '\'' || peek() == '"')
          h.descr = string_literal("the descr");
        else
          h.descr_raw = raw_value();
      } else if (key == "fortran_order") {
        seen(h.fortran_order.has_value());
        h.fortran_order = boolean();
      } else if (key == "shape") {
        seen(h.shape.has_value());
        const std::size_t b = i_;
        h.shape = tuple();
        h.shape_text = s_.substr(b, i_ - b);
      } else {
        fail("npy header has an unknown key '" + shown(key) + "' (numpy writes descr, fortran_order, shape)");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') fail("npy header is malformed at offset " + std::to_string(i_) + ": " + shown(s_.substr(i_)));
    }
    ++i_;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t' || s_[i_] == '\0'))
      ++i_;
    if (i_ != s_.size()) fail("npy header has trailing text after the dict: " + shown(s_.substr(i_)));
    for (const char* k : {"descr", "fortran_order", "shape"}) {
      const bool have = std::string(k) == "descr"   ? (h.descr || h.descr_raw)
                        : std::string(k) == "shape" ? h.shape.has_value()
                                                    : h.fortran_order.has_value();
      if (!have) fail(std::string("npy header has no '") + k + "' entry");
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& m) const { throw InputError(field_, "'" + path_ + "': " + m); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char ch) {
    if (peek() != ch || i_ >= s_.size())
      fail(std::string("npy header is malformed: expected '") + ch + "' at offset " + std::to_string(i_) + ", got " +
           shown(s_.substr(i_, 20)) + " (header " + shown(s_) + ")");
    ++i_;
  }
  std::string string_literal(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"')
      fail(std::string("npy header is malformed: expected ") + what + " at offset " + std::to_string(i_) + " (header " +
           shown(s_) + ")");
    std::string out;
    for (++i_; i_ < s_.size() && s_[i_] != q; ++i_) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_];
    }
    if (i_ >= s_.size()) fail("npy header has an unterminated string (header " + shown(s_) + ")");
    ++i_;
    return out;
  }
  bool boolean() {
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const std::size_t n = std::strlen(word);
      if (s_.compare(i_, n, word) == 0) {
        i_ += n;
        return value;
      }
    }
    fail("npy header entry 'fortran_order' must be True or False, got " + shown(s_.substr(i_, 20)));
  }
  // A tuple of non-negative ints: "()", "(3,)", "(3, 4)".
  std::vector<std::int64_t> tuple() {
    const std::size_t start = i_;
    auto bad = [&](const std::string& why) {
      std::size_t e = s_.find(')', start);
      fail("npy header has a malformed shape " + shown(s_.substr(start, e == std::string::npos ? 40 : e - start + 1)) +
           ": " + why);
    };
    if (peek() != '(') bad("expected a tuple");
    ++i_;
    std::vector<std::int64_t> dims;
    while (true) {
      ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') bad("dimensions must be non-negative integers");
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, peek() - '0', &v))
          bad("a dimension overflows int64");
        ++i_;
      }
      if (peek() == 'L') ++i_;  // Python 2 long
      dims.push_back(v);
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') bad("expected ',' or ')'");
    }
    ++i_;
    if (dims.size() > 32) bad("more than 32 dimensions");
    return dims;
  }
  // A bracketed value (a structured descr), as written, for the message.
  std::string raw_value() {
    const std::size_t b = i_;
    int depth = 0;
    char quote = 0;
    for (; i_ < s_.size(); ++i_) {
      const char ch = s_[i_];
      if (quote) {
        if (ch == quote) quote = 0;
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
      } else if (ch == '[' || ch == '(' || ch == '{') {
        ++depth;
      } else if (ch == ']' || ch == ')' || ch == '}') {
        if (depth == 0) break;
        if (--depth == 0) {
          ++i_;
          break;
        }
      } else if (ch == ',' && depth == 0) {
        break;
      }
    }
    if (i_ == b) fail("npy header entry 'descr' has no value (header " + shown(s_) + ")");
    return s_.substr(b, i_ - b);
  }

  const std::string& s_;
  std::size_t i_ = 0;
  const std::string& path_;
  const std::string& field_;
};

std::string tuple_text(const std::vector<std::int64_t>& s) {
  std::string o = "(";
  for (std::size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + (s.size() == 1 ? ",)" : ")");
}

// Reads the header of an .npy file of `file_size` bytes from `in`, leaving `in` at the
// data, and checks the size it claims against `file_size`: the array without its data,
// and the data's byte count in `bytes`.
NpyArray read_header(std::istream& in, std::uint64_t file_size, const std::string& path, const std::string& field,
                     std::int64_t& bytes) {
  auto fail = [&](const std::string& m) -> InputError { return InputError(field, "'" + path + "' " + m); };
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw fail("is not an .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint64_t hlen = 0, preamble = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) throw fail("is truncated in the header");
    hlen = b[0] | (b[1] << 8);
    preamble = 10;
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw fail("is truncated in the header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
    preamble = 12;
  } else {
    throw fail("has unsupported npy version " + std::to_string(major));
  }
  if (hlen > (1u << 20)) throw fail("has an implausible header length " + std::to_string(hlen) + " (at most 1 MiB)");
  if (preamble + hlen > file_size)
    throw fail("is truncated: header claims " + std::to_string(preamble + hlen) + " header bytes, file has " +
               std::to_string(file_size));
  std::string text(static_cast<std::size_t>(hlen), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(hlen))) throw fail("is truncated in the header");

  const Header h = HeaderParser(text, path, field).parse();
  NpyArray a;
  if (h.descr_raw)
    throw fail("has a structured or non-string dtype descr " + shown(*h.descr_raw) +
               "; only plain numeric dtypes (<u2, |u1, <i4, <i8, <f4, ...) are supported");
  a.descr = *h.descr;
  const int isz = descr_item_size(a.descr);
  if (isz == 0)
    throw fail("has an unsupported dtype descr '" + shown(a.descr) +
               "' (plain numeric dtypes like <u2, |u1, <i4, <f4)");
  // Normalised to byte order + kind + size ("i8" and "<i08" are numpy's "<i8" too).
  const bool has_order = std::strchr("<>|=", a.descr[0]) != nullptr;
  const char order = !has_order || a.descr[0] == '=' ? '<' : a.descr[0];
  if (order == '>' && isz > 1) throw fail("is big-endian (" + shown(a.descr) + "); write little-endian");
  a.descr = std::string(1, isz == 1 ? '|' : '<') + a.descr[has_order ? 1 : 0] + std::to_string(isz);
  if (*h.fortran_order && !IXO_JUDGE_MUTANT(npy_fortran_order_ignored))
    throw fail("is in Fortran order; write a C-contiguous array");
  a.shape = *h.shape;

  const std::string shape = tuple_text(a.shape);
  std::int64_t n = 1;
  for (const std::int64_t d : a.shape)
    if (__builtin_mul_overflow(n, d, &n)) throw fail("has shape " + shape + " whose element count overflows int64");
  if (__builtin_mul_overflow(n, std::int64_t{isz}, &bytes))
    throw fail("has shape " + shape + " x " + std::to_string(isz) + " bytes per element, which overflows int64");
  const std::uint64_t have = file_size - preamble - hlen;
  if (static_cast<std::uint64_t>(bytes) > have && !IXO_JUDGE_MUTANT(npy_short_data_accepted))
    throw fail("is truncated: header claims " + std::to_string(bytes) + " data bytes (shape " + shape + ", dtype " +
               a.descr + "), file has " + std::to_string(have));
  if (static_cast<std::uint64_t>(bytes) < have)
    throw fail("has " + std::to_string(have - static_cast<std::uint64_t>(bytes)) + " trailing bytes: header claims " +
               std::to_string(bytes) + " data bytes (shape " + shape + ", dtype " + a.descr + "), file has " +
               std::to_string(have));
  return a;
}

// Reads an .npy file of `file_size` bytes from `in`. Nothing larger than the header (at
// most 1 MiB) is allocated before the claimed size has been checked against `file_size`.
NpyArray read_stream(std::istream& in, std::uint64_t file_size, const std::string& path, const std::string& field) {
  auto fail = [&](const std::string& m) -> InputError { return InputError(field, "'" + path + "' " + m); };
  std::int64_t bytes = 0;
  NpyArray a = read_header(in, file_size, path, field, bytes);
  try {
    a.data.reserve(static_cast<std::size_t>(bytes));
    advise_huge_pages(a.data.data(), static_cast<std::size_t>(bytes));  // before the pages are first touched
    a.data.resize(static_cast<std::size_t>(bytes));
  } catch (const std::bad_alloc&) {
    throw fail("needs " + std::to_string(bytes) + " bytes of memory for its data; allocation failed");
  }
  if (bytes > 0 && !in.read(reinterpret_cast<char*>(a.data.data()), static_cast<std::streamsize>(bytes)) &&
      !IXO_JUDGE_MUTANT(npy_short_data_accepted))
    throw fail("is truncated: expected " + std::to_string(bytes) + " data bytes, got " + std::to_string(in.gcount()));
  return a;
}

// Maps `len` bytes of `fd` read-only at a 2 MiB-aligned address: file offsets and
// addresses then agree modulo 2 MiB, so the kernel can map the page cache's large folios
// with huge (PMD) entries. A K row lookup is a random access; with 4 KiB pages each one
// also misses the TLB (measured: the oracle spends about 20 % more time). MAP_FAILED on error.
void* map_aligned(int fd, std::size_t len) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  void* area = ::mmap(nullptr, len + kHuge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return MAP_FAILED;
  const auto a = reinterpret_cast<std::uintptr_t>(area);
  const std::uintptr_t aligned = (a + kHuge - 1) & ~std::uintptr_t{kHuge - 1};
  void* p = ::mmap(reinterpret_cast<void*>(aligned), len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::munmap(area, len + kHuge);
    errno = e;
    return MAP_FAILED;
  }
  if (aligned > a) ::munmap(area, aligned - a);  // the reservation's unused head and tail
  const std::uintptr_t end = aligned + len, area_end = a + len + kHuge;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t tail = (end + page - 1) / page * page;
  if (area_end > tail) ::munmap(reinterpret_cast<void*>(tail), area_end - tail);
  ::madvise(p, len, MADV_HUGEPAGE);  // a hint; without it the kernel may still use huge entries
  return p;
}

struct MemoryBuf : std::streambuf {
  MemoryBuf(const void* p, std::size_t n) {
    char* b = const_cast<char*>(static_cast<const char*>(p));
    setg(b, b, b + n);
  }
};

}  // namespace

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string o = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {  // piece by piece: GCC 12 -Wrestrict misfires on "," + to_string
    if (i) o += ',';
    o += std::to_string(shape[i]);
  }
  return o + "]";
}

int NpyArray::item_size() const { return descr_item_size(descr); }

void require_regular_file(const std::string& path, const std::string& field) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    std::error_code lec;
    if (fs::is_symlink(fs::symlink_status(path, lec)))
      throw InputError(field, "cannot open '" + path + "': it is a symlink to a missing file");
    throw InputError(field, "cannot open '" + path + "' (missing file?)");
  }
  if (fs::is_regular_file(st)) return;
  const char* kind = fs::is_directory(st)        ? "a directory"
                     : fs::is_fifo(st)           ? "a FIFO"
                     : fs::is_socket(st)         ? "a socket"
                     : fs::is_block_file(st)     ? "a block device"
                     : fs::is_character_file(st) ? "a character device"
                                                 : "not a regular file";
  throw InputError(field, "'" + path + "' is " + kind + ", not a regular file");
}

void advise_huge_pages(void* p, std::size_t n) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (n < 4 * kHuge) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (a + kHuge - 1) & ~(kHuge - 1), hi = (a + n) & ~(kHuge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

// A regular .npy file opened for reading, and its size (InputError naming the field otherwise).
static std::ifstream open_npy(const std::string& path, const std::string& field, std::uintmax_t& size) {
  require_regular_file(path, field);
  std::error_code ec;
  size = fs::file_size(path, ec);
  if (ec) throw InputError(field, "cannot open '" + path + "': " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, "cannot open '" + path + "' for reading");
  return in;
}

NpyArray read_npy(const std::string& path, const std::string& field) {
  std::uintmax_t size = 0;
  std::ifstream in = open_npy(path, field, size);
  return read_stream(in, size, path, field);
}

NpyMap map_npy(const std::string& path, const std::string& field) {
  std::uintmax_t size = 0;
  std::ifstream in = open_npy(path, field, size);
  NpyMap m;
  std::int64_t bytes = 0;
  NpyArray h = read_header(in, size, path, field, bytes);
  m.descr = std::move(h.descr);
  m.shape = std::move(h.shape);
  m.bytes = static_cast<std::size_t>(bytes);
  if (bytes == 0) return m;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(field, "cannot open '" + path + "' for reading: " + std::strerror(errno));
  const std::size_t len = static_cast<std::size_t>(size);
  void* base = map_aligned(fd, len);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) throw InputError(field, "cannot map '" + path + "': " + std::strerror(map_errno));
  std::shared_ptr<const std::uint8_t> whole(static_cast<const std::uint8_t*>(base), [len](const std::uint8_t* p) {
    ::munmap(const_cast<std::uint8_t*>(p), len);
  });
  m.data = std::shared_ptr<const std::uint8_t>(whole, whole.get() + (size - static_cast<std::uintmax_t>(bytes)));
  return m;
}

NpyArray parse_npy(const void* bytes, std::size_t size, const std::string& path, const std::string& field) {
  MemoryBuf buf(bytes, size);
  std::istream in(&buf);
  return read_stream(in, size, path, field);
}

void write_npy(const std::string& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes) {
  std::string sh = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    sh += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  sh += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + sh + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError("output", "cannot write '" + path + "'");
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t hl = static_cast<std::uint16_t>(header.size());
  const char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  out.write(hb, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw InputError("output", "failed writing '" + path + "'");
}

}  // namespace ixo
