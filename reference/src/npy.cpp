#include "ixo/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include "ixo/error.hpp"

namespace ixo {

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

int NpyArray::item_size() const { return descr.size() >= 3 ? std::stoi(descr.substr(2)) : 0; }

namespace {

std::string dict_value(const std::string& header, const std::string& key, const std::string& field) {
  // The header is a Python dict literal; values are a quoted string, True/False, or a
  // parenthesised tuple.
  std::size_t k = std::string::npos;
  for (const char q : {'\'', '"'}) {
    k = header.find(std::string(1, q) + key + std::string(1, q));
    if (k != std::string::npos) break;
  }
  if (k == std::string::npos) throw InputError(field, "npy header has no '" + key + "' entry");
  std::size_t v = header.find(':', k + key.size() + 2);
  if (v == std::string::npos) throw InputError(field, "npy header entry '" + key + "' has no value");
  v = header.find_first_not_of(" \t", v + 1);
  if (v == std::string::npos) throw InputError(field, "npy header entry '" + key + "' has no value");
  const char open = header[v];
  std::size_t end;
  if (open == '\'' || open == '"')
    end = header.find(open, v + 1);
  else if (open == '(')
    end = header.find(')', v + 1);
  else
    end = header.find_first_of(",}", v) - 1;
  if (end == std::string::npos || end < v) throw InputError(field, "npy header entry '" + key + "' is malformed");
  return header.substr(v, end - v + 1);
}

}  // namespace

NpyArray read_npy(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, "cannot open '" + path + "' (missing file?)");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw InputError(field, "'" + path + "' is not an .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t hlen = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) throw InputError(field, "'" + path + "' truncated in header");
    hlen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw InputError(field, "'" + path + "' truncated in header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  } else {
    throw InputError(field, "'" + path + "' has unsupported npy version " + std::to_string(major));
  }
  if (hlen > (1u << 20)) throw InputError(field, "'" + path + "' has an implausible header length");
  std::string header(hlen, '\0');
  if (!in.read(header.data(), hlen)) throw InputError(field, "'" + path + "' truncated in header");

  NpyArray a;
  std::string descr = dict_value(header, "descr", field);
  a.descr = descr.substr(1, descr.size() - 2);
  if (a.descr.size() == 3 && a.descr[0] == '=') a.descr[0] = '<';
  if (a.descr.size() == 3 && a.descr[1] == 'u' && a.descr[2] == '1') a.descr[0] = '|';
  if (a.descr.size() == 3 && a.descr[0] == '>' && a.descr[2] != '1')
    throw InputError(field, "'" + path + "' is big-endian (" + a.descr + "); write little-endian");
  if (dict_value(header, "fortran_order", field) != "False")
    throw InputError(field, "'" + path + "' is in Fortran order; write a C-contiguous array");
  const std::string shape = dict_value(header, "shape", field);
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(item.substr(b), &used);
      if (v < 0) throw std::invalid_argument("negative");
      a.shape.push_back(v);
    } catch (const std::exception&) {
      throw InputError(field, "'" + path + "' has a malformed shape " + shape);
    }
  }
  const int isz = a.item_size();
  if (isz <= 0) throw InputError(field, "'" + path + "' has an unsupported dtype '" + a.descr + "'");
  const std::int64_t n = a.numel();
  if (n < 0 || n > (std::int64_t{1} << 40) / isz) throw InputError(field, "'" + path + "' has an implausible shape");
  a.data.resize(static_cast<std::size_t>(n * isz));
  if (n > 0 && !in.read(reinterpret_cast<char*>(a.data.data()), static_cast<std::streamsize>(a.data.size())))
    throw InputError(field, "'" + path + "' is truncated: expected " + std::to_string(n * isz) + " data bytes, got " +
                                std::to_string(in.gcount()));
  return a;
}

void write_npy(const std::string& path, const std::string& descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes) {
  std::string sh = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) sh += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
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
