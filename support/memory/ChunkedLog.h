// ChunkedLog — an append-only sequence in fixed chunks that never move: appending never
// copies what is there (a vector's growth copies it all and, past malloc's mmap threshold,
// lands on fresh pages every time: growing ranks' event vectors was 19% of gpipe 64 x 256's
// profile, and this log made that check 0.86x as long).
// Indexing is a shift and a mask. A rank's events are kept in one (sim::EventLog), in chunks of
// 32 (4 KiB): on huge pages every allocated byte is resident, and with chunks of 256 a
// rank's first event cost 47 KiB (an all-reduce on 8192 ranks took 483 MiB, now 119).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <vector>

namespace schedc::memory {

template <class T, size_t kChunkBits = 5> class ChunkedLog {
  static constexpr size_t kChunk = size_t(1) << kChunkBits;

public:
  template <class Log, class Item> class Iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = Item *;
    using reference = Item &;
    Iterator() = default;
    Iterator(Log *log, size_t i) : log_(log), i_(i) {}
    reference operator*() const { return (*log_)[i_]; }
    pointer operator->() const { return &(*log_)[i_]; }
    Iterator &operator++() { return ++i_, *this; }
    Iterator operator++(int) { return Iterator(log_, i_++); }
    friend bool operator==(const Iterator &a, const Iterator &b) { return a.i_ == b.i_; }
    friend bool operator!=(const Iterator &a, const Iterator &b) { return a.i_ != b.i_; }

  private:
    Log *log_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iterator<ChunkedLog, T>;
  using const_iterator = Iterator<const ChunkedLog, const T>;

  ChunkedLog() = default;
  ChunkedLog(const ChunkedLog &) = delete;
  ChunkedLog &operator=(const ChunkedLog &) = delete;
  ~ChunkedLog() {
    for (size_t i = 0; i < size_; ++i)
      (*this)[i].~T();
    for (T *chunk : chunks_)
      std::allocator<T>().deallocate(chunk, kChunk);
  }

  // A new value-initialized item at the end. A chunk's items are made as they are appended:
  // the pages of its unused tail are never touched.
  T &emplace_back() {
    if ((size_ & (kChunk - 1)) == 0)
      chunks_.push_back(std::allocator<T>().allocate(kChunk));
    T *item = &(*this)[size_];
    new (item) T();
    ++size_;
    return *item;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T &operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  T &back() { return (*this)[size_ - 1]; }
  const T &back() const { return (*this)[size_ - 1]; }
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

private:
  std::vector<T *> chunks_; // raw storage; items [0, size_) are constructed
  size_t size_ = 0;
};

} // namespace schedc::memory
