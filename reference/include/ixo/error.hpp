// Input errors: every malformed input is reported as an InputError that names the
// offending field and its value. The command line maps it to exit code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace ixo {

class InputError : public std::runtime_error {
 public:
  InputError(std::string field, std::string message)
      : std::runtime_error(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace ixo
