"""Uploads and the list of one's recordings (/files)."""

TEXT = {
    "uploads.cut_short": (
        "the file is shorter than its header says: it was cut off during copying or upload; "
        "upload the whole file",
        "文件比其文件头声明的要短：它在复制或上传时被截断了；请上传完整的文件",
        "檔案比其檔頭宣告的要短：它在複製或上傳時被截斷了；請上傳完整的檔案",
    ),
    "uploads.cut_short_seconds": (
        "its header says {stated} s, the file holds {held} s",
        "文件头声明 {stated} 秒，文件只有 {held} 秒",
        "檔頭宣告 {stated} 秒，檔案只有 {held} 秒",
    ),
}

TEXT |= {
    "uploads.files_title": (
        "**Your recordings** ({n}): remove one with its button below (you are asked first).",
        "**你的记录**（{n} 个）：用下方按钮删除（会先询问你）。",
        "**你的記錄**（{n} 個）：用下方按鈕刪除（會先詢問你）。",
    ),
    "uploads.files_none": (
        "Your data folder holds no recordings. Attach EDF, BDF, GDF, FIF, EEGLAB or BrainVision "
        "files to a message to upload them.",
        "你的数据文件夹中没有记录。在消息中附加 EDF、BDF、GDF、FIF、EEGLAB 或 BrainVision 文件即可上传。",
        "你的資料夾中沒有記錄。在訊息中附加 EDF、BDF、GDF、FIF、EEGLAB 或 BrainVision 檔案即可上傳。",
    ),
    "uploads.col_name": ("Recording", "记录", "記錄"),
    "uploads.col_size": ("Size", "大小", "大小"),
    "uploads.col_from": ("Where it came from", "来源", "來源"),
    "uploads.from_here": (
        "uploaded in this conversation, {when}",
        "在本对话中上传，{when}",
        "在本對話中上傳，{when}",
    ),
    "uploads.from_other": (
        "uploaded in another conversation, {when}",
        "在另一个对话中上传，{when}",
        "在另一個對話中上傳，{when}",
    ),
    "uploads.from_named": (
        "uploaded in “{title}”, {when}",
        "在“{title}”中上传，{when}",
        "在「{title}」中上傳，{when}",
    ),
    "uploads.from_upload": ("uploaded", "已上传", "已上傳"),
    "uploads.from_demo": ("demo set", "演示数据集", "示範資料集"),
    "uploads.from_fetched": (
        "public data set (fetched)",
        "公开数据集（已下载）",
        "公開資料集（已下載）",
    ),
    "uploads.from_folder": (
        "placed in the data folder",
        "放在数据文件夹中",
        "放在資料夾中",
    ),
    "uploads.more_buttons": (
        "Buttons are shown for the first {n}; remove some to see buttons for the rest.",
        "只为前 {n} 个显示按钮；删除一些后可看到其余的按钮。",
        "只為前 {n} 個顯示按鈕；刪除一些後可看到其餘的按鈕。",
    ),
    "uploads.remove_button": ("Remove {name}", "删除 {name}", "刪除 {name}"),
    "uploads.done_button": ("Done", "完成", "完成"),
    "uploads.keep_button": ("Keep it", "保留", "保留"),
    "uploads.confirm": (
        "Remove `{name}` ({size}) from your data folder? This cannot be undone.",
        "要从你的数据文件夹中删除 `{name}`（{size}）吗？此操作无法撤销。",
        "要從你的資料夾中刪除 `{name}`（{size}）嗎？此操作無法復原。",
    ),
    "uploads.removed": ("🗑️ Removed {files}.", "🗑️ 已删除 {files}。", "🗑️ 已刪除 {files}。"),
    "uploads.not_removed": (
        "⚠️ `{name}` was not removed: {reason}",
        "⚠️ 未删除 `{name}`：{reason}",
        "⚠️ 未刪除 `{name}`：{reason}",
    ),
}

TEXT |= {
    "uploads.not_eeg": (
        "not an EEG recording; accepted: {formats}",
        "不是 EEG 记录；可接受的格式：{formats}",
        "不是 EEG 記錄；可接受的格式：{formats}",
    ),
    "uploads.busy": (
        "⚠️ Another upload of yours is being checked; wait until it has finished, then attach "
        "{names} again. Nothing of it was kept.",
        "⚠️ 你的另一个上传正在检查中；请等它完成后再附加 {names}。本次上传未保留任何内容。",
        "⚠️ 你的另一個上傳正在檢查中；請等它完成後再附加 {names}。本次上傳未保留任何內容。",
    ),
    "uploads.busy_title": (
        "Upload · refused · another upload is being checked",
        "上传 · 已拒绝 · 另一个上传正在检查中",
        "上傳 · 已拒絕 · 另一個上傳正在檢查中",
    ),
    "uploads.checking": (
        "Upload · checking {n} file(s)…",
        "上传 · 正在检查 {n} 个文件…",
        "上傳 · 正在檢查 {n} 個檔案…",
    ),
    "uploads.failed": (
        "The upload failed ({reason}). Nothing was kept.",
        "上传失败（{reason}）。未保留任何内容。",
        "上傳失敗（{reason}）。未保留任何內容。",
    ),
    "uploads.failed_short": (
        "The upload failed; nothing was kept.",
        "上传失败；未保留任何内容。",
        "上傳失敗；未保留任何內容。",
    ),
    "uploads.title": (
        "Upload · {parts} · {took}",
        "上传 · {parts} · {took}",
        "上傳 · {parts} · {took}",
    ),
    "uploads.title_failed": (
        "Upload · failed · {took}",
        "上传 · 失败 · {took}",
        "上傳 · 失敗 · {took}",
    ),
    "uploads.n_accepted": ("{n} accepted", "{n} 个已接受", "{n} 個已接受"),
    "uploads.n_refused": ("{n} refused", "{n} 个已拒绝", "{n} 個已拒絕"),
    "uploads.nothing": ("nothing received", "未收到文件", "未收到檔案"),
    "uploads.no_file": ("No file arrived.", "没有收到文件。", "沒有收到檔案。"),
    "uploads.refused_block": (
        "❌ **{name}** refused: {reason}. Nothing of it was kept.",
        "❌ **{name}** 已拒绝：{reason}。未保留任何内容。",
        "❌ **{name}** 已拒絕：{reason}。未保留任何內容。",
    ),
    "uploads.ignored_block": (
        "Ignored (not EEG files): {names}",
        "已忽略（不是 EEG 文件）：{names}",
        "已忽略（不是 EEG 檔案）：{names}",
    ),
    "uploads.accepted_head": (
        "✅ **{name}**: {fmt}, {n} channels, {seconds} s at {sfreq} Hz",
        "✅ **{name}**：{fmt}，{n} 个通道，{seconds} 秒，采样率 {sfreq} Hz",
        "✅ **{name}**：{fmt}，{n} 個通道，{seconds} 秒，取樣率 {sfreq} Hz",
    ),
    "uploads.channels": ("- Channels: {names}", "- 通道：{names}", "- 通道：{names}"),
    "uploads.events": ("- Events: {events}", "- 事件：{events}", "- 事件：{events}"),
    "uploads.recorded": ("- Recorded: {when}", "- 记录时间：{when}", "- 記錄時間：{when}"),
    "uploads.files": ("- Files: {files}", "- 文件：{files}", "- 檔案：{files}"),
    "uploads.note": ("- Note: {note}", "- 注意：{note}", "- 注意：{note}"),
    "uploads.uploaded": (
        "📥 Uploaded `{name}` ({brief})",
        "📥 已上传 `{name}`（{brief}）",
        "📥 已上傳 `{name}`（{brief}）",
    ),
    "uploads.refused": (
        "⚠️ Refused `{name}`: {reason}.",
        "⚠️ 已拒绝 `{name}`：{reason}。",
        "⚠️ 已拒絕 `{name}`：{reason}。",
    ),
    "uploads.ignored": (
        "Ignored {n} file(s) that are not EEG recordings.",
        "已忽略 {n} 个不是 EEG 记录的文件。",
        "已忽略 {n} 個不是 EEG 記錄的檔案。",
    ),
    "uploads.next_chat": (
        "Switch to Agent mode to analyse it.",
        "切换到智能体模式即可分析它。",
        "切換到智能體模式即可分析它。",
    ),
    "uploads.next_agent": (
        "Ask about it, e.g. *analyse the file I just uploaded*.",
        "可以直接提问，例如 *分析我刚上传的文件*。",
        "可以直接提問，例如 *分析我剛上傳的檔案*。",
    ),
}
