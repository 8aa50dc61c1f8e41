"""The user's documents on the page (#41): /knowledge, adding a dropped document, removing one."""

TEXT = {
    "commands.knowledge": (
        "Your documents: title, pages, size, collection; remove them (drop a PDF to add one)",
        "你的文档：标题、页数、大小、文档集；可删除（拖入 PDF 即可添加）",
        "你的文件：標題、頁數、大小、文件集；可刪除（拖入 PDF 即可新增）",
    ),
    "knowledge.title": (
        "**Your documents** ({n})",
        "**你的文档**（{n} 个）",
        "**你的文件**（{n} 個）",
    ),
    "knowledge.none": (
        "You have no documents yet. Drop a PDF, Markdown, HTML or text file on the chat to add "
        "it to your personal collection; in Agent mode the agent then searches it and cites "
        "its pages.",
        "你还没有文档。把 PDF、Markdown、HTML 或文本文件拖到聊天中，即可加入你的个人文档集；"
        "在智能体模式下，智能体会检索它并引用页码。",
        "你還沒有文件。把 PDF、Markdown、HTML 或文字檔拖到聊天中，即可加入你的個人文件集；"
        "在智能體模式下，智能體會檢索它並引用頁碼。",
    ),
    "knowledge.col_title": ("Title", "标题", "標題"),
    "knowledge.col_pages": ("Pages", "页数", "頁數"),
    "knowledge.col_size": ("Size", "大小", "大小"),
    "knowledge.col_added": ("Added", "添加时间", "新增時間"),
    "knowledge.col_collection": ("Collection", "文档集", "文件集"),
    "knowledge.col_shared": ("Shared with", "共享给", "共用給"),
    "knowledge.personal": ("personal", "个人", "個人"),
    "knowledge.nobody": ("only you", "仅你自己", "僅你自己"),
    "knowledge.no_pages": ("–", "–", "–"),
    "knowledge.more_buttons": (
        "Only the first {n} documents have a Remove button; remove some to reach the others "
        "(or use `brainchat knowledge remove`).",
        "只有前 {n} 个文档有删除按钮；删除一些后可处理其余的（或使用 `brainchat knowledge remove`）。",
        "只有前 {n} 個文件有刪除按鈕；刪除一些後可處理其餘的（或使用 `brainchat knowledge remove`）。",
    ),
    "knowledge.remove_button": ("Remove {title}", "删除 {title}", "刪除 {title}"),
    "knowledge.done_button": ("Done", "完成", "完成"),
    "knowledge.keep_button": ("Keep it", "保留", "保留"),
    "knowledge.confirm": (
        "Remove **{title}** ({size}) from {collection}? Its passages are deleted and the agent "
        "no longer finds or cites it.",
        "从{collection}中删除 **{title}**（{size}）？它的段落会被删除，智能体将不再检索或引用它。",
        "從{collection}中刪除 **{title}**（{size}）？它的段落會被刪除，智能體將不再檢索或引用它。",
    ),
    "knowledge.removed": (
        "Removed **{title}** and its passages.",
        "已删除 **{title}** 及其段落。",
        "已刪除 **{title}** 及其段落。",
    ),
    "knowledge.not_removed": (
        "**{title}** was not removed: {reason}",
        "**{title}** 未删除：{reason}",
        "**{title}** 未刪除：{reason}",
    ),
    "knowledge.adding": (
        "Adding {n} document(s) to your collection",
        "正在把 {n} 个文档加入你的文档集",
        "正在把 {n} 個文件加入你的文件集",
    ),
    "knowledge.step_title": (
        "Documents: {parts} · {took}",
        "文档：{parts} · {took}",
        "文件：{parts} · {took}",
    ),
    "knowledge.n_added": ("{n} added", "已添加 {n} 个", "已新增 {n} 個"),
    "knowledge.n_refused": ("{n} refused", "拒绝 {n} 个", "拒絕 {n} 個"),
    "knowledge.nothing": ("nothing added", "未添加任何文档", "未新增任何文件"),
    "knowledge.added": (
        "Added **{title}** (`{name}`) to your personal collection: {pages} page(s), {chunks} "
        "passage(s).",
        "已把 **{title}**（`{name}`）加入你的个人文档集：{pages} 页，{chunks} 个段落。",
        "已把 **{title}**（`{name}`）加入你的個人文件集：{pages} 頁，{chunks} 個段落。",
    ),
    "knowledge.added_no_pages": (
        "Added **{title}** (`{name}`) to your personal collection: {chunks} passage(s).",
        "已把 **{title}**（`{name}`）加入你的个人文档集：{chunks} 个段落。",
        "已把 **{title}**（`{name}`）加入你的個人文件集：{chunks} 個段落。",
    ),
    "knowledge.unchanged": (
        "**{title}** (`{name}`) is already in your collection (the same file): nothing was "
        "indexed again.",
        "**{title}**（`{name}`）已在你的文档集中（同一文件）：未重新索引。",
        "**{title}**（`{name}`）已在你的文件集中（同一檔案）：未重新索引。",
    ),
    "knowledge.updated": (
        "{said} (a new version of a file of that name: it replaces the old one)",
        "{said}（同名文件的新版本：已替换旧版本）",
        "{said}（同名檔案的新版本：已取代舊版本）",
    ),
    "knowledge.note": ("Note: {note}", "注意：{note}", "注意：{note}"),
    "knowledge.refused": (
        "**{name}** was not added: {reason}",
        "**{name}** 未添加：{reason}",
        "**{name}** 未新增：{reason}",
    ),
    "knowledge.next": (
        "Ask about it in Agent mode: the agent searches your documents and cites them with "
        "their page. `/knowledge` lists them.",
        "在智能体模式下提问：智能体会检索你的文档并引用页码。`/knowledge` 可列出它们。",
        "在智能體模式下提問：智能體會檢索你的文件並引用頁碼。`/knowledge` 可列出它們。",
    ),
    "knowledge.unavailable": (
        "Documents cannot be added or listed here: {reason}",
        "此处无法添加或列出文档：{reason}",
        "此處無法新增或列出文件：{reason}",
    ),
    "knowledge.failed": (
        "Adding **{name}** failed: {reason}. Try again; if it fails again, convert the file to "
        "PDF or text.",
        "添加 **{name}** 失败：{reason}。请重试；若仍失败，请把文件转换为 PDF 或文本。",
        "新增 **{name}** 失敗：{reason}。請重試；若仍失敗，請把檔案轉換為 PDF 或文字。",
    ),
    "knowledge.share_button": ("Share {collection}…", "共享 {collection}…", "共用 {collection}…"),
    "knowledge.share_ask": (
        "Who may read your **{collection}** documents? Type their account names, separated by "
        "commas or spaces; `{nobody}` alone for nobody but you. Now: {now}.",
        "谁可以阅读你的 **{collection}** 文档？请输入他们的账号名，用逗号或空格分隔；只输入 "
        "`{nobody}` 表示仅你自己。目前：{now}。",
        "誰可以閱讀你的 **{collection}** 文件？請輸入他們的帳號名稱，以逗號或空格分隔；只輸入 "
        "`{nobody}` 表示僅你自己。目前：{now}。",
    ),
    "knowledge.shared": (
        "**{collection}** can now be read by: {readers}. They can search and cite it, not "
        "remove it; a name with no account reads nothing.",
        "**{collection}** 现在可由以下用户阅读：{readers}。他们可以搜索和引用，但不能删除；没有账号的"
        "名字读不到任何内容。",
        "**{collection}** 現在可由以下使用者閱讀：{readers}。他們可以搜尋和引用，但不能刪除；沒有帳號的"
        "名稱讀不到任何內容。",
    ),
    "knowledge.share_unchanged": (
        "Nothing typed: who may read **{collection}** is unchanged.",
        "未输入任何内容：**{collection}** 的读者保持不变。",
        "未輸入任何內容：**{collection}** 的讀者維持不變。",
    ),
    "knowledge.share_refused": (
        "Not shared: {reason}",
        "未共享：{reason}",
        "未共用：{reason}",
    ),
    "knowledge.share_empty": (
        "no account name was typed; type names separated by commas, or `{nobody}` for nobody",
        "没有输入账号名；请输入以逗号分隔的名字，或输入 `{nobody}` 表示不共享",
        "沒有輸入帳號名稱；請輸入以逗號分隔的名稱，或輸入 `{nobody}` 表示不共用",
    ),
    "knowledge.share_bad_name": (
        "{name!r} is not an account name (letters, digits, '.', '_', '@', '-'); check the "
        "spelling and type the names again",
        "{name!r} 不是账号名（字母、数字、'.'、'_'、'@'、'-'）；请检查拼写后重新输入",
        "{name!r} 不是帳號名稱（字母、數字、'.'、'_'、'@'、'-'）；請檢查拼字後重新輸入",
    ),
    "knowledge.share_too_many": (
        "a collection can be shared with at most {n} accounts",
        "一个集合最多可与 {n} 个账号共享",
        "一個集合最多可與 {n} 個帳號共用",
    ),
}
