// Why a file could not be read: in Japanese first, the reader's own words (English, for
// whoever fixes the file or the server) after it.
const FAILURES = [
  [/^file too large|too large when unzipped/, "ファイルが大きすぎます"],
  [/^encrypted|password/, "パスワードで保護されているか、古い形式の Office ファイルです"],
  [/^corrupt|^not a valid Office file|^malformed|^cannot parse/, "ファイルが壊れているか、形式が正しくありません"],
  [/^unsupported file type/, "この種類のファイルは取り込めません"],
  [/^empty file|^no text found/, "文字が含まれていません"],
  [/^permission denied/, "読み取る権限がありません"],
  [/^file not found/, "ファイルが見つかりません"],
  [/time limit|MAX_LOAD_SECONDS/, "読み込みに時間がかかりすぎました"],
  [/memory/, "読み込みに必要なメモリが上限を超えました"],
  [/^needs /, "サーバーに必要な部品が入っていません（管理者に連絡してください）"],
];
export function failure(reason = "") {
  const found = FAILURES.find(([pattern]) => pattern.test(reason));
  return (found ? found[1] : "読み込めませんでした") + (reason ? `（${reason}）` : "");
}
