// error.h - The three kinds of tilejit error and the exit code each maps to.
#pragma once

#include <stdexcept>
#include <string>

namespace tilejit {

/// Base of every exception tilejit throws. `exit_code()` is what the CLI
/// returns for it: 1 user error, 2 internal error, 77 no GPU.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  ~Error() override;
  virtual int exit_code() const;
};

/// The caller's mistake: a bad argument, an unknown op, a malformed kernel.
/// The message names the object, the value and the requirement.
class UserError : public Error {
public:
  using Error::Error;
  ~UserError() override;
  int exit_code() const override;
};

/// A bug in tilejit: a pass failed on a program the verifier accepted.
class InternalError : public Error {
public:
  using Error::Error;
  ~InternalError() override;
  int exit_code() const override;
};

/// A CUDA driver call failed; the message names the call and cuGetErrorName.
class DriverError : public Error {
public:
  using Error::Error;
  ~DriverError() override;
  int exit_code() const override;
};

/// No usable CUDA driver or GPU where one is needed. One line, exit 77.
class NoGpuError : public Error {
public:
  using Error::Error;
  ~NoGpuError() override;
  int exit_code() const override;
};

} // namespace tilejit
